// Fuzz target: arbitrary peer bytes after the greeting -> frame_decoder, alternating
// the copy path and the zero-copy path, then every command parser on command frames.
// Checks the decoder's contract (never consumes more than offered, bodies of the
// announced size, MORE never on commands, limit honoured) besides memory safety.
#include "wire/command.hpp"
#include "wire/frame_decoder.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

using namespace zlink::wire;

namespace {

void check(bool ok) {
    if (!ok)
        std::abort();
}

void parse_commands(std::span<const std::uint8_t> body) {
    command_view cmd;
    if (parse_command(body, cmd) != wire_error::none)
        return;
    switch (cmd.kind) {
    case command_kind::ready: {
        metadata_reader r(cmd.data);
        property_view p;
        std::size_t seen = 0;
        while (r.next(p)) {
            check(!p.name.empty() && p.name.size() <= 255);
            seen += 5 + p.name.size() + p.value.size();
        }
        check(seen <= cmd.data.size());
        std::span<const std::uint8_t> v;
        (void)find_property(cmd.data, "Socket-Type", v);
        break;
    }
    case command_kind::error: {
        std::string_view reason;
        (void)parse_error_data(cmd.data, reason);
        break;
    }
    case command_kind::ping: {
        std::uint16_t ttl;
        std::span<const std::uint8_t> ctx;
        if (parse_ping_data(cmd.data, ttl, ctx) == wire_error::none)
            check(ctx.size() <= max_ping_context);
        break;
    }
    case command_kind::pong: {
        std::span<const std::uint8_t> ctx;
        (void)parse_pong_data(cmd.data, ctx);
        break;
    }
    default: break;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size < 2)
        return 0;
    // Octet 0 picks the read chunk size (1..256), octet 1 the size limit, so the
    // fuzzer explores split points and limits along with content.
    const std::size_t chunk = std::size_t{data[0]} + 1;
    const std::uint64_t limit = data[1] == 0 ? 1 << 16 : std::uint64_t{data[1]} * 16;
    std::span<const std::uint8_t> stream(data + 2, size - 2);

    frame_decoder dec(limit);
    std::vector<std::uint8_t> body;
    bool zero_copy = false;
    while (!stream.empty()) {
        std::span<const std::uint8_t> in = stream.first(std::min(chunk, stream.size()));
        stream = stream.subspan(in.size());
        for (;;) {
            // Zero-copy: pretend to read from the socket straight into the body.
            if (zero_copy && !dec.body_remaining().empty() && !in.empty()) {
                auto rem = dec.body_remaining();
                const std::size_t k = std::min(rem.size(), in.size());
                std::memcpy(rem.data(), in.data(), k);
                in = in.subspan(k);
                if (dec.body_filled(k) == frame_decoder::step::frame) {
                    check(body.size() == dec.header().size);
                    if (dec.header().command())
                        parse_commands(body);
                }
                continue;
            }
            std::size_t used = 0;
            const auto s = dec.decode(in, used);
            check(used <= in.size());
            in = in.subspan(used);
            if (s == frame_decoder::step::header) {
                const auto &h = dec.header();
                check(h.size <= limit);
                check(!(h.command() && h.more()));
                body.assign(h.size, 0);
                dec.set_body(body);
                zero_copy = !zero_copy;
            } else if (s == frame_decoder::step::frame) {
                if (dec.header().command())
                    parse_commands(body);
            } else if (s == frame_decoder::step::error) {
                check(dec.error() != wire_error::none);
                return 0;
            } else {
                check(in.empty());
                break;
            }
        }
    }
    return 0;
}
