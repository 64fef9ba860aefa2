// Fuzz target: CURVE MESSAGE opening (RFC 26) as a property test. The input is a
// program of operations on a client/server codec pair sharing one key:
//   0 n      client seals n octets (n = next octet), server opens: must succeed, same bytes
//   1 n p x  as 0, but octet p (mod size) of the sealed body is XORed with x (x != 0):
//            must be refused, and the next good MESSAGE must still open
//   2        the last good MESSAGE again: must be refused (replay)
//   3 k      the last sealed MESSAGE cut to k octets (k < its size): must be refused
//   4 n ...  n raw octets from the input opened as a MESSAGE: must be refused
//   5 n      server seals, client opens: must succeed
// A refusal must never yield plaintext.
#include "fuzz_security_util.hpp"

#include "wire/curve_message.hpp"

#include <span>
#include <vector>

using namespace zlink::wire;
using fuzz_security::check;

namespace {

using bytes = std::vector<std::uint8_t>;

struct reader {
    std::span<const std::uint8_t> in;
    bool empty() const { return in.empty(); }
    std::uint8_t next() {
        if (in.empty())
            return 0;
        const std::uint8_t b = in[0];
        in = in.subspan(1);
        return b;
    }
};

curve_key shared_key() {
    curve_key k{};
    for (std::size_t i = 0; i < k.size(); ++i)
        k[i] = static_cast<std::uint8_t>(0xA5 ^ i);
    return k;
}

bytes seal(curve_message_codec &c, std::size_t n, std::uint8_t flags) {
    bytes body(n, static_cast<std::uint8_t>(n)), wire;
    check(c.seal(flags, body, wire) == wire_error::none);
    const std::size_t h = (wire[0] & frame_flag::long_size) ? long_header_size : short_header_size;
    return bytes(wire.begin() + static_cast<std::ptrdiff_t>(h), wire.end());
}

bool opens(curve_message_codec &c, std::span<const std::uint8_t> m, bytes *out = nullptr) {
    std::uint8_t flags = 0;
    bytes body;
    const bool ok = c.open(m, flags, body) == wire_error::none;
    if (!ok)
        check(body.empty());
    if (out)
        *out = body;
    return ok;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    fuzz_security::use_deterministic_random();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    curve_message_codec client(shared_key(), false, 3, 1), server(shared_key(), true, 2, 2);
    reader r{{data, size}};
    bytes last_good, last_sealed;
    while (!r.empty()) {
        switch (r.next() % 6) {
        case 0: {
            const std::size_t n = r.next();
            last_sealed = seal(client, n, frame_flag::more);
            bytes body;
            check(opens(server, last_sealed, &body) &&
                  body == bytes(n, static_cast<std::uint8_t>(n)));
            last_good = last_sealed;
            break;
        }
        case 1: {
            last_sealed = seal(client, r.next(), 0);
            const std::size_t at = r.next() % last_sealed.size();
            const std::uint8_t x = r.next() | 1;
            last_sealed[at] ^= x;
            check(!opens(server, last_sealed));
            last_sealed = seal(client, 1, 0);
            check(opens(server, last_sealed));
            last_good = last_sealed;
            break;
        }
        case 2:
            if (!last_good.empty())
                check(!opens(server, last_good));
            break;
        case 3:
            if (!last_sealed.empty())
                check(!opens(server, std::span(last_sealed).first(r.next() % last_sealed.size())));
            break;
        case 4: {
            bytes raw;
            for (std::size_t n = r.next(); n > 0 && !r.empty(); --n)
                raw.push_back(r.next());
            check(!opens(server, raw));
            break;
        }
        case 5: check(opens(client, seal(server, r.next(), frame_flag::command))); break;
        }
    }
    return 0;
}
