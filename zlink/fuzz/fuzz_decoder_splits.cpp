// Fuzz target: the engine's batched read path must not depend on how the kernel
// splits the byte stream. The same peer bytes are decoded twice: once in a single
// piece, once the way engine_t reads (a bounded input buffer refilled by reads of
// fuzzer-chosen sizes, compacted when full, and large bodies read straight into the
// message body once the buffer is drained). Both runs must yield the same frames
// (flags and body octets) and end the same way (same error, or both mid-frame).
#include "wire/frame_decoder.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

using namespace zlink::wire;

namespace {

using bytes = std::vector<std::uint8_t>;
using step = frame_decoder::step;

// Both runs cap bodies alike, so a hostile 2^62-octet header fails the same way in
// each instead of exhausting memory.
constexpr std::uint64_t body_limit = 1 << 20;

struct outcome {
    std::vector<std::uint8_t> flags;
    std::vector<bytes> bodies;
    wire_error error = wire_error::none;
    bool operator==(const outcome &) const = default;
};

// Decoder plus the frame it is filling; records every completed frame.
struct sink {
    frame_decoder dec{body_limit};
    bytes body;
    outcome out;

    void frame_done() {
        out.flags.push_back(dec.header().flags);
        out.bodies.push_back(body);
    }
    // Decodes `in` until it is used up; false once the decoder failed.
    bool feed(std::span<const std::uint8_t> in) {
        for (;;) {
            std::size_t used = 0;
            const step s = dec.decode(in, used);
            if (used > in.size())
                std::abort();
            in = in.subspan(used);
            if (s == step::header) {
                body.assign(dec.header().size, 0);
                dec.set_body(body);
            } else if (s == step::frame) {
                frame_done();
            } else if (s == step::error) {
                out.error = dec.error();
                return false;
            } else {
                return true;
            }
        }
    }
};

// The fuzzer's read plan: input buffer capacity, in-place threshold, read sizes.
struct plan {
    std::size_t capacity;
    std::size_t in_place_threshold;
    std::vector<std::size_t> reads;
    std::size_t next = 0;
    std::size_t read_size() { return reads.empty() ? 4096 : reads[next++ % reads.size()]; }
};

// engine_t::start_read/on_read/decode_frames in miniature, over `stream`.
outcome engine_like(std::span<const std::uint8_t> stream, plan &p) {
    sink s;
    bytes inbuf(p.capacity);
    std::size_t begin = 0, end = 0;
    while (!stream.empty()) {
        if (begin == end)
            begin = end = 0;
        auto rem = s.dec.body_remaining();
        const std::size_t want = std::min(p.read_size(), stream.size());
        if (begin == end && !rem.empty() && rem.size() >= p.in_place_threshold) {
            const std::size_t n = std::min(want, rem.size());
            std::memcpy(rem.data(), stream.data(), n);
            stream = stream.subspan(n);
            if (s.dec.body_filled(n) == step::frame)
                s.frame_done();
            continue;
        }
        if (end == inbuf.size()) {
            std::memmove(inbuf.data(), inbuf.data() + begin, end - begin);
            end -= begin;
            begin = 0;
        }
        const std::size_t n = std::min(want, inbuf.size() - end);
        std::memcpy(inbuf.data() + end, stream.data(), n);
        stream = stream.subspan(n);
        end += n;
        if (!s.feed({inbuf.data() + begin, end - begin}))
            return s.out;
        begin = end;  // feed() consumes everything it is given unless it failed
    }
    return s.out;
}

outcome in_one_piece(std::span<const std::uint8_t> stream) {
    sink s;
    s.feed(stream);
    return s.out;
}

}  // namespace

// Input: [capacity-1][threshold][k][k read sizes-1][peer bytes after the greeting].
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size < 3)
        return 0;
    plan p{std::size_t{data[0]} + 1, data[1], {}};
    const std::size_t k = std::min<std::size_t>(data[2] & 31, size - 3);
    for (std::size_t i = 0; i < k; ++i)
        p.reads.push_back(std::size_t{data[3 + i]} + 1);
    const std::span<const std::uint8_t> stream(data + 3 + k, size - 3 - k);
    if (!(engine_like(stream, p) == in_one_piece(stream)))
        std::abort();
    return 0;
}
