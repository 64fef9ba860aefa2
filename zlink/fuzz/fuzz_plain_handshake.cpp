// Fuzz target: arbitrary peer bytes -> PLAIN client or server (RFC 24), with the
// ZAP answer chosen by the input; leftovers after the handshake are not touched.
//
// Octet 0: bit 0 = our side (0 server, 1 client); bits 1-3 = ZAP answer (200, 300,
// 400, 500, handler missing, "201"); bit 7 = prepend a valid PLAIN greeting.
// Octet 1: read chunk size - 1. Octet 2: our socket type (mod 11). Rest: peer bytes.
#include "fuzz_security_util.hpp"

#include "wire/plain_client.hpp"
#include "wire/plain_server.hpp"

#include <memory>
#include <span>
#include <vector>

using namespace zlink::wire;
using fuzz_security::check;

namespace {

zap_reply answer(int which) {
    static const char *codes[] = {"200", "300", "400", "500", "", "201"};
    zap_reply r;
    if (which == 4)
        r.handler_missing = true;
    else
        r.status_code = codes[which % 6];
    r.user_id = "fuzz";
    return r;
}

void check_outcome(handshake &hs, socket_type self) {
    check(!(hs.done() && hs.failed()));
    if (!hs.done())
        return;
    check(compatible(self, hs.peer_socket_type()));
    check(validate_metadata(hs.peer_metadata()) == wire_error::none);
    check(hs.transform() == nullptr);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size < 3)
        return 0;
    const bool client = (data[0] & 1) != 0;
    const int zap = (data[0] >> 1) & 7;
    const std::size_t chunk = std::size_t{data[1]} + 1;
    const auto self = static_cast<socket_type>(data[2] % 11);
    std::vector<std::uint8_t> peer;
    if (data[0] & 0x80) {
        const auto g = make_greeting("PLAIN", !client);
        peer.assign(g.begin(), g.end());
    }
    peer.insert(peer.end(), data + 3, data + size);

    const handshake_options opts{.self = self, .max_handshake_command = 4096};
    std::unique_ptr<handshake> hs;
    if (client)
        hs = std::make_unique<plain_client>(opts, "user", "password");
    else
        hs = std::make_unique<plain_server>(opts);
    std::span<const std::uint8_t> stream(peer);
    while (!stream.empty() && !hs->done() && !hs->failed()) {
        if (const zap_request *r = hs->zap_pending()) {
            check(!client && r->mechanism == "PLAIN" && r->credentials.size() == 2);
            hs->zap_answer(answer(zap));
            continue;
        }
        const auto in = stream.first(std::min(chunk, stream.size()));
        const std::size_t used = hs->feed(in);
        check(used <= in.size());
        check(used == in.size() || hs->done() || hs->failed() || hs->zap_pending());
        stream = stream.subspan(used);
        hs->consume_outgoing(hs->outgoing().size());
    }
    check_outcome(*hs, self);
    return 0;
}
