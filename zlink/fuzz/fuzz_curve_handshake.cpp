// Fuzz target: the CURVE handshake (RFC 26) under hostile input, three ways.
//
// Octet 0 (mode % 3):
//   0  arbitrary bytes -> CURVE server (after a valid greeting if bit 7 is set)
//   1  arbitrary bytes -> CURVE client (likewise)
//   2  a real client and server talk; the rest of the input lists in-flight
//      corruptions as (direction, offset high, offset low, xor) quadruples,
//      applied to the byte stream of that direction. Whatever is corrupted, the
//      handshake must either fail or end with both sides holding keys that agree
//      (a MESSAGE sealed by one opens on the other, both ways).
// Octet 1: read chunk size - 1. Randomness is deterministic (fuzz_security_util).
#include "fuzz_security_util.hpp"

#include "wire/curve_client.hpp"
#include "wire/curve_server.hpp"

#include <memory>
#include <span>
#include <vector>

using namespace zlink::wire;
using fuzz_security::check;

namespace {

struct keys {
    curve_key server_public{}, server_secret{}, client_public{}, client_secret{};
    keys() {
        curve_box::keypair(server_public, server_secret);
        curve_box::keypair(client_public, client_secret);
    }
};

const handshake_options dealer{.self = socket_type::dealer, .max_handshake_command = 4096};

zap_reply accept() {
    zap_reply r;
    r.status_code = "200";
    return r;
}

void feed_raw(handshake &hs, std::span<const std::uint8_t> stream, std::size_t chunk) {
    while (!stream.empty() && !hs.done() && !hs.failed()) {
        if (hs.zap_pending()) {
            hs.zap_answer(accept());
            continue;
        }
        const auto in = stream.first(std::min(chunk, stream.size()));
        const std::size_t used = hs.feed(in);
        check(used <= in.size());
        check(used == in.size() || hs.done() || hs.failed() || hs.zap_pending());
        stream = stream.subspan(used);
        hs.consume_outgoing(hs.outgoing().size());
    }
    check(!(hs.done() && hs.failed()));
    if (hs.done())
        check(hs.transform() != nullptr &&
              validate_metadata(hs.peer_metadata()) == wire_error::none);
}

// Moves each side's output to the other, corrupting octets in transit.
struct link {
    handshake *side[2];
    std::vector<std::uint8_t> inbox[2];
    std::size_t sent[2] = {0, 0};
    std::span<const std::uint8_t> corruptions;

    void transfer(int from) {
        const auto out = side[from]->outgoing();
        for (std::size_t i = 0; i < out.size(); ++i) {
            std::uint8_t b = out[i];
            for (std::size_t c = 0; c + 4 <= corruptions.size(); c += 4) {
                const std::size_t at = (std::size_t{corruptions[c + 1]} << 8) | corruptions[c + 2];
                if ((corruptions[c] & 1) == from && at == sent[from] + i)
                    b ^= corruptions[c + 3];
            }
            inbox[1 - from].push_back(b);
        }
        sent[from] += out.size();
        side[from]->consume_outgoing(out.size());
    }

    bool step(int i, std::size_t chunk) {
        handshake &hs = *side[i];
        if (hs.zap_pending()) {
            hs.zap_answer(accept());
            return true;
        }
        if (inbox[i].empty() || hs.done() || hs.failed())
            return false;
        const std::size_t used =
            hs.feed(std::span(inbox[i]).first(std::min(chunk, inbox[i].size())));
        inbox[i].erase(inbox[i].begin(), inbox[i].begin() + static_cast<std::ptrdiff_t>(used));
        return used > 0;
    }
};

void check_keys_agree(handshake &a, handshake &b) {
    const std::uint8_t text[] = {'p', 'i', 'n', 'g'};
    for (auto [from, to] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
        std::vector<std::uint8_t> wire, body;
        check(from->transform()->seal(frame_flag::more, text, wire) == wire_error::none);
        std::uint8_t flags = 0;
        check(to->transform()->open(std::span(wire).subspan(2), flags, body) == wire_error::none);
        check(flags == frame_flag::more && body.size() == sizeof text);
    }
}

void run_pair(std::span<const std::uint8_t> corruptions, std::size_t chunk) {
    const keys k;
    curve_client c(dealer, k.client_public, k.client_secret, k.server_public);
    curve_server s({.self = socket_type::router, .max_handshake_command = 4096}, k.server_secret,
                   {});
    link l{{&c, &s}, {}, {0, 0}, corruptions};
    for (int guard = 0; guard < 10000; ++guard) {
        l.transfer(0);
        l.transfer(1);
        const bool moved = l.step(0, chunk) | l.step(1, chunk);
        if (!moved && c.outgoing().empty() && s.outgoing().empty())
            break;
    }
    check(!(c.done() && c.failed()) && !(s.done() && s.failed()));
    if (c.done() && s.done())
        check_keys_agree(c, s);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    fuzz_security::use_deterministic_random();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size < 2)
        return 0;
    fuzz_security::reset_random();
    const int mode = data[0] % 3;
    const std::size_t chunk = std::size_t{data[1]} + 1;
    const std::span<const std::uint8_t> rest(data + 2, size - 2);
    if (mode == 2)
        return run_pair(rest, chunk), 0;
    const keys k;
    std::vector<std::uint8_t> peer;
    if (data[0] & 0x80) {
        const auto g = make_greeting("CURVE", mode == 1);
        peer.assign(g.begin(), g.end());
    }
    peer.insert(peer.end(), rest.begin(), rest.end());
    if (mode == 0) {
        curve_server s(dealer, k.server_secret, {});
        feed_raw(s, peer, chunk);
    } else {
        curve_client c(dealer, k.client_public, k.client_secret, k.server_public);
        feed_raw(c, peer, chunk);
    }
    return 0;
}
