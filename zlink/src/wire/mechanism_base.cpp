// Greeting, command framing, properties and ZAP cycle shared by PLAIN and CURVE.
#include "wire/mechanism_base.hpp"

#include "wire/frame.hpp"

#include <algorithm>

namespace zlink::wire {

mechanism_base::mechanism_base(const handshake_options &opts, const char *mechanism, bool as_server)
    : opts_(opts), routing_id_(opts.routing_id.begin(), opts.routing_id.end()),
      greeting_(mechanism), decoder_(opts.max_handshake_command) {
    // Copies of the caller's extra properties; reserving first keeps the views valid.
    std::size_t total = 0;
    for (const auto &p : opts.extra)
        total += p.name.size() + p.value.size();
    extra_bytes_.reserve(total);
    for (const auto &p : opts.extra) {
        const auto *name = extra_bytes_.data() + extra_bytes_.size();
        extra_bytes_.insert(extra_bytes_.end(), p.name.begin(), p.name.end());
        const auto *value = extra_bytes_.data() + extra_bytes_.size();
        extra_bytes_.insert(extra_bytes_.end(), p.value.begin(), p.value.end());
        extra_.push_back({std::string_view(reinterpret_cast<const char *>(name), p.name.size()),
                          std::span<const std::uint8_t>(value, p.value.size())});
    }
    opts_.routing_id = routing_id_;
    opts_.extra = extra_;
    build_our_properties();
    const auto g = make_greeting(mechanism, as_server, opts.announce_minor, routing_id_.size());
    out_.assign(g.begin(), g.end());
}

// The property list is what a READY frame carries after its name: write one and
// keep everything after the header and "\x05READY".
void mechanism_base::build_our_properties() {
    std::vector<std::uint8_t> frame(ready_frame_size(opts_.self, routing_id_, extra_));
    const std::size_t n = write_ready_frame(frame, opts_.self, routing_id_, extra_);
    if (n == 0)
        return;  // over-long routing id or property name: the options refuse those earlier
    const std::size_t header =
        n - short_header_size <= max_short_body ? short_header_size : long_header_size;
    const auto skip = static_cast<std::ptrdiff_t>(header + 1 + 5);  // header, "\x05READY"
    our_props_.assign(frame.begin() + skip, frame.begin() + static_cast<std::ptrdiff_t>(n));
}

std::span<const std::uint8_t> mechanism_base::body_of(const command_view &cmd) noexcept {
    const auto *start = reinterpret_cast<const std::uint8_t *>(cmd.name.data()) - 1;
    return {start, 1 + cmd.name.size() + cmd.data.size()};
}

// Our greeting goes out in the steps greeting_release() allows; everything queued
// after it (commands) only once the whole greeting may go.
std::size_t mechanism_base::releasable() const noexcept {
    const std::size_t greeting_end = greeting_release(greeting_.accepted());
    return greeting_end < greeting_size ? std::min(greeting_end, out_.size()) : out_.size();
}

std::span<const std::uint8_t> mechanism_base::outgoing() const noexcept {
    // releasable() never shrinks and consume_outgoing() stays within it.
    return std::span(out_).subspan(out_sent_, releasable() - out_sent_);
}

void mechanism_base::consume_outgoing(std::size_t n) noexcept {
    out_sent_ += std::min(n, outgoing().size());
}

void mechanism_base::send_command(std::span<const std::uint8_t> body) {
    std::uint8_t header[max_header_size];
    const std::size_t h = write_frame_header(header, body.size(), false, true);
    out_.insert(out_.end(), header, header + h);
    out_.insert(out_.end(), body.begin(), body.end());
}

void mechanism_base::send_error(std::string_view reason) {
    std::uint8_t buf[max_error_frame_size];
    const std::size_t n = write_error_frame(buf, reason);
    out_.insert(out_.end(), buf, buf + n);
}

void mechanism_base::fail(wire_error e, std::string_view detail) {
    error_ = e;
    detail_.assign(detail);
}

std::size_t mechanism_base::feed(std::span<const std::uint8_t> in) {
    if (waiting())
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
        on_greeting();
    }
    return used + feed_commands(in.subspan(used));
}

// Decodes whole command frames into command_ and hands each to on_command(),
// stopping as soon as the handshake finishes, fails or waits for ZAP.
std::size_t mechanism_base::feed_commands(std::span<const std::uint8_t> in) {
    std::size_t used = 0;
    while (!waiting()) {
        std::size_t n = 0;
        const auto s = decoder_.decode(in.subspan(used), n);
        used += n;
        switch (s) {
        case frame_decoder::step::need_more: return used;
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
        case frame_decoder::step::frame: {
            command_view cmd;
            if (const auto e = parse_command(command_, cmd); e == wire_error::none)
                on_command(cmd);
            else if (!on_unparsed_command(command_))
                fail(e);
            break;
        }
        }
    }
    return used;
}

bool mechanism_base::accept_properties(std::span<const std::uint8_t> props) {
    if (validate_metadata(props) != wire_error::none) {
        fail(wire_error::malformed_metadata);
        return false;
    }
    peer_props_.assign(props.begin(), props.end());
    std::span<const std::uint8_t> value;
    if (!find_property(peer_props_, "Socket-Type", value)) {
        fail(wire_error::missing_socket_type);
        return false;
    }
    const std::string_view name(reinterpret_cast<const char *>(value.data()), value.size());
    const auto type = parse_socket_type(name);
    if (!type || !compatible(opts_.self, *type)) {
        // RFC 37: "it SHOULD handle errors by returning an ERROR command".
        send_error("Invalid socket type");
        fail(type ? wire_error::incompatible_socket_type : wire_error::unknown_socket_type, name);
        return false;
    }
    peer_type_ = *type;
    if (find_property(peer_props_, "Identity", value)) {
        peer_has_id_ = true;
        id_offset_ = static_cast<std::size_t>(value.data() - peer_props_.data());
        id_size_ = value.size();
    }
    return true;
}

void mechanism_base::on_error_command(const command_view &cmd) {
    std::string_view reason;
    if (const auto e = parse_error_data(cmd.data, reason); e != wire_error::none)
        return fail(e);
    on_error_reason(reason);
}

void mechanism_base::on_error_reason(std::string_view reason) {
    // libzmq reports a three-digit ZAP status 300..500 as an authentication failure.
    const bool status = reason.size() == 3 && reason[0] >= '3' && reason[0] <= '5' &&
                        reason[1] == '0' && reason[2] == '0';
    fail(status ? wire_error::auth_failed : wire_error::peer_sent_error, reason);
}

void mechanism_base::ask_zap(std::string_view mechanism,
                             std::vector<std::vector<std::uint8_t>> credentials) {
    zap_.mechanism.assign(mechanism);
    zap_.credentials = std::move(credentials);
    zap_waiting_ = true;
}

const zap_request *mechanism_base::zap_pending() const noexcept {
    return zap_waiting_ ? &zap_ : nullptr;
}

void mechanism_base::on_zap_missing() { fail(wire_error::no_zap_handler); }

// RFC 27: 200 goes on; 300 is a temporary failure (disconnect without ERROR, as
// libzmq and the CurveZMQ RFC say); 400 and 500 are sent back in an ERROR.
void mechanism_base::zap_answer(const zap_reply &reply) {
    if (!zap_waiting_)
        return;
    zap_waiting_ = false;
    for (auto &c : zap_.credentials)
        std::fill(c.begin(), c.end(), std::uint8_t{0});  // PLAIN passwords
    zap_.credentials.clear();
    if (reply.handler_missing)
        return on_zap_missing();
    const std::string &code = reply.status_code;
    if (code == "200") {
        user_id_ = reply.user_id;
        return on_zap_accepted();
    }
    if (code != "300" && code != "400" && code != "500")
        return fail(wire_error::zap_invalid_status_code, code);
    if (code != "300")
        send_refusal(code);
    fail(wire_error::auth_failed, code);
}

zmtp_version mechanism_base::session_version() const noexcept {
    const zmtp_version peer = greeting_.peer_version();
    if (peer.major > our_major)
        return {our_major, opts_.announce_minor};
    return {peer.major, std::min(peer.minor, opts_.announce_minor)};
}

std::span<const std::uint8_t> mechanism_base::peer_routing_id() const noexcept {
    if (!peer_has_id_)
        return {};
    return std::span(peer_props_).subspan(id_offset_, id_size_);
}

std::span<const std::uint8_t> mechanism_base::peer_metadata() const noexcept {
    if (!done_)
        return {};
    return peer_props_;
}

}  // namespace zlink::wire
