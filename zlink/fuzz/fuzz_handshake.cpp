// Fuzz target: arbitrary peer bytes -> null_handshake (greeting, READY/ERROR,
// socket-type validation), then the leftovers -> frame_decoder, as the engine does.
#include "wire/frame_decoder.hpp"
#include "wire/null_handshake.hpp"

#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

using namespace zlink::wire;

namespace {

void check(bool ok) {
    if (!ok)
        std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size < 2)
        return 0;
    // Octet 0: our socket type (0..10) and whether to prepend a valid greeting (so
    // the fuzzer spends its time on READY parsing); octet 1: read chunk size.
    const auto self = static_cast<socket_type>((data[0] & 0x0F) % 11);
    const bool prepend_greeting = (data[0] & 0x80) != 0;
    const std::size_t chunk = std::size_t{data[1]} + 1;
    std::vector<std::uint8_t> peer;
    if (prepend_greeting) {
        const auto g = make_greeting();
        peer.assign(g.begin(), g.end());
    }
    peer.insert(peer.end(), data + 2, data + size);

    const std::uint8_t id[] = {'i', 'd'};
    null_handshake hs({.self = self, .routing_id = id, .extra = {}, .max_handshake_command = 4096});
    std::span<const std::uint8_t> stream(peer);
    while (!stream.empty() && !hs.done() && !hs.failed()) {
        const auto in = stream.first(std::min(chunk, stream.size()));
        const std::size_t used = hs.feed(in);
        check(used <= in.size());
        check(used == in.size() || hs.done() || hs.failed());
        stream = stream.subspan(used);
        hs.consume_outgoing(hs.outgoing().size() / 2 + 1);
    }
    check(!(hs.done() && hs.failed()));
    if (hs.failed()) {
        check(hs.feed(stream) == 0);
        return 0;
    }
    if (!hs.done())
        return 0;
    check(compatible(self, hs.peer_socket_type()));
    check(validate_metadata(hs.peer_metadata()) == wire_error::none);
    check(hs.peer_routing_id().size() <= hs.peer_metadata().size());

    frame_decoder dec(1 << 16);
    std::vector<std::uint8_t> body;
    for (;;) {
        std::size_t used = 0;
        const auto s = dec.decode(stream, used);
        stream = stream.subspan(used);
        if (s == frame_decoder::step::header) {
            body.assign(dec.header().size, 0);
            dec.set_body(body);
        } else if (s != frame_decoder::step::frame) {
            break;
        }
    }
    return 0;
}
