// Small helpers to write byte vectors in tests readably.
#pragma once

#include "wire/frame_decoder.hpp"

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zlink::wire::test {

using bytes = std::vector<std::uint8_t>;

// Concatenates pieces given as strings (their characters) or byte lists.
struct piece {
    bytes b;
    piece(std::string_view s) : b(s.begin(), s.end()) {}
    piece(const char *s) : piece(std::string_view(s)) {}
    piece(const std::string &s) : piece(std::string_view(s)) {}
    piece(std::initializer_list<int> l) {
        for (int v : l)
            b.push_back(static_cast<std::uint8_t>(v));
    }
    piece(const bytes &v) : b(v) {}
};

inline bytes cat(std::initializer_list<piece> pieces) {
    bytes out;
    for (const auto &p : pieces)
        out.insert(out.end(), p.b.begin(), p.b.end());
    return out;
}

inline bytes repeat(std::uint8_t v, std::size_t n) { return bytes(n, v); }

inline std::span<const std::uint8_t> as_span(std::string_view s) {
    return {reinterpret_cast<const std::uint8_t *>(s.data()), s.size()};
}

struct decoded_frame {
    std::uint8_t flags;
    bytes body;
    bool operator==(const decoded_frame &) const = default;
};

struct decode_result {
    std::vector<decoded_frame> frames;
    wire_error error = wire_error::none;
};

// Runs a decoder over `chunks` in order, with the copy path (no zero-copy reads).
// Bodies are allocated per frame here; the engine would use message storage.
inline decode_result decode_chunks(frame_decoder &dec, const std::vector<bytes> &chunks) {
    decode_result r;
    bytes body;
    for (const auto &chunk : chunks) {
        std::span<const std::uint8_t> in(chunk);
        for (;;) {
            std::size_t used = 0;
            const auto s = dec.decode(in, used);
            in = in.subspan(used);
            if (s == frame_decoder::step::header) {
                body.assign(dec.header().size, 0);
                dec.set_body(body);
            } else if (s == frame_decoder::step::frame) {
                r.frames.push_back({dec.header().flags, body});
            } else if (s == frame_decoder::step::error) {
                r.error = dec.error();
                return r;
            } else {
                break;
            }
        }
    }
    return r;
}

}  // namespace zlink::wire::test
