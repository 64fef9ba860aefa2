// NULL-mechanism handshake: greeting exchange, then READY both ways (RFC 37).
#include "wire/null_handshake.hpp"

#include <algorithm>
#include <cstring>

namespace zlink::wire {

null_handshake::null_handshake(const handshake_options& opts)
    : opts_(opts), routing_id_(opts.routing_id.begin(), opts.routing_id.end()),
      greeting_("NULL"), decoder_(opts.max_handshake_command)
{
    // Copy the extra properties so the caller's storage may go away. Reserving the
    // total first keeps the views below valid (no reallocation).
    std::size_t total = 0;
    for (const auto& p : opts.extra)
        total += p.name.size() + p.value.size();
    extra_bytes_.reserve(total);
    extra_.reserve(opts.extra.size());
    for (const auto& p : opts.extra) {
        const std::uint8_t* name = extra_bytes_.data() + extra_bytes_.size();
        extra_bytes_.insert(extra_bytes_.end(), p.name.begin(), p.name.end());
        const std::uint8_t* value = extra_bytes_.data() + extra_bytes_.size();
        extra_bytes_.insert(extra_bytes_.end(), p.value.begin(), p.value.end());
        extra_.push_back({std::string_view(reinterpret_cast<const char*>(name), p.name.size()),
                          std::span<const std::uint8_t>(value, p.value.size())});
    }
    opts_.routing_id = routing_id_;
    opts_.extra = extra_;

    // RFC 37: "When a peer uses the NULL security mechanism, the as-server field
    // MUST be zero."
    const auto g = make_greeting("NULL", false, opts.announce_minor);
    out_.reserve(greeting_size + ready_frame_size(opts_.self, routing_id_, extra_) +
                 max_error_frame_size);
    out_.assign(g.begin(), g.end());
}

std::span<const std::uint8_t> null_handshake::outgoing() const noexcept
{
    return std::span(out_).subspan(out_sent_);
}

void null_handshake::consume_outgoing(std::size_t n) noexcept
{
    out_sent_ += std::min(n, out_.size() - out_sent_);
}

void null_handshake::fail(wire_error e, std::string_view detail)
{
    error_ = e;
    detail_.assign(detail);
}

void null_handshake::queue_error_command(std::string_view reason)
{
    std::uint8_t buf[max_error_frame_size];
    const std::size_t n = write_error_frame(buf, reason);
    out_.insert(out_.end(), buf, buf + n);
}

void null_handshake::on_greeting_accepted()
{
    const std::size_t at = out_.size();
    out_.resize(at + ready_frame_size(opts_.self, routing_id_, extra_));
    const std::size_t n = write_ready_frame(std::span(out_).subspan(at), opts_.self, routing_id_, extra_);
    out_.resize(at + n); // n == 0 only for an over-long routing id or property name
}

std::size_t null_handshake::feed(std::span<const std::uint8_t> in)
{
    if (done_ || failed())
        return 0;
    std::size_t used = 0;
    if (!greeting_.done()) {
        used = greeting_.feed(in);
        if (greeting_.failed()) {
            fail(greeting_.error(), greeting_.error() == wire_error::mechanism_mismatch
                                        ? greeting_.peer_mechanism()
                                        : std::string_view());
            return used;
        }
        if (!greeting_.done())
            return used;
        on_greeting_accepted();
    }
    return used + feed_frames(in.subspan(used));
}

// Decodes the peer's first command frame into command_ and acts on it.
std::size_t null_handshake::feed_frames(std::span<const std::uint8_t> in)
{
    std::size_t used = 0;
    while (!done_ && !failed()) {
        std::size_t n = 0;
        const auto s = decoder_.decode(in.subspan(used), n);
        used += n;
        switch (s) {
        case frame_decoder::step::need_more:
            return used;
        case frame_decoder::step::error:
            fail(decoder_.error() == wire_error::frame_too_large ? wire_error::handshake_too_large
                                                                 : decoder_.error());
            return used;
        case frame_decoder::step::header:
            if (!decoder_.header().command()) {
                fail(wire_error::unexpected_message);
                return used;
            }
            command_.resize(decoder_.header().size);
            decoder_.set_body(command_);
            break;
        case frame_decoder::step::frame:
            on_command();
            break;
        }
    }
    return used;
}

void null_handshake::on_command()
{
    command_view cmd;
    if (const auto e = parse_command(command_, cmd); e != wire_error::none)
        return fail(e);
    if (cmd.kind == command_kind::error) {
        std::string_view reason;
        if (const auto e = parse_error_data(cmd.data, reason); e != wire_error::none)
            return fail(e);
        return fail(wire_error::peer_sent_error, reason);
    }
    if (cmd.kind != command_kind::ready)
        return fail(wire_error::unexpected_command, cmd.name);
    if (const auto e = validate_metadata(cmd.data); e != wire_error::none)
        return fail(e);
    meta_offset_ = static_cast<std::size_t>(cmd.data.data() - command_.data());

    std::span<const std::uint8_t> value;
    if (!find_property(cmd.data, "Socket-Type", value))
        return fail(wire_error::missing_socket_type);
    const std::string_view type_name(reinterpret_cast<const char*>(value.data()), value.size());
    const auto type = parse_socket_type(type_name);
    if (!type) {
        queue_error_command("Invalid socket type");
        return fail(wire_error::unknown_socket_type, type_name);
    }
    if (!compatible(opts_.self, *type)) {
        // RFC 37: "When a peer validates the socket type, it SHOULD handle errors by
        // returning an ERROR command, and then disconnecting the peer."
        queue_error_command("Invalid socket type");
        return fail(wire_error::incompatible_socket_type, type_name);
    }
    peer_type_ = *type;
    if (find_property(cmd.data, "Identity", value)) {
        peer_has_id_ = true;
        id_offset_ = static_cast<std::size_t>(value.data() - command_.data());
        id_size_ = value.size();
    }
    done_ = true;
}

zmtp_version null_handshake::session_version() const noexcept
{
    const zmtp_version peer = greeting_.peer_version();
    if (peer.major > our_major)
        return {our_major, opts_.announce_minor};
    return {peer.major, std::min(peer.minor, opts_.announce_minor)};
}

std::span<const std::uint8_t> null_handshake::peer_routing_id() const noexcept
{
    if (!peer_has_id_)
        return {};
    return std::span(command_).subspan(id_offset_, id_size_);
}

std::span<const std::uint8_t> null_handshake::peer_metadata() const noexcept
{
    if (!done_)
        return {};
    return std::span(command_).subspan(meta_offset_);
}

} // namespace zlink::wire
