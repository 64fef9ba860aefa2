// Fuzz target: frames described by the input are encoded with frame_encoder, written
// out with partial writes of fuzzer-chosen sizes, decoded with frame_decoder, and must
// come back identical (flags and bodies).
#include "wire/frame_decoder.hpp"
#include "wire/frame_encoder.hpp"

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

struct frame {
    bool more;
    std::span<const std::uint8_t> body;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size < 3)
        return 0;
    const std::size_t threshold = data[0];
    const std::size_t write_step = std::size_t{data[1]} * 3 + 1;
    std::span<const std::uint8_t> rest(data + 2, size - 2);
    // Each frame: one length octet (bit 7 = MORE, low 7 bits scaled), then body.
    std::vector<frame> frames;
    while (!rest.empty()) {
        const std::size_t len = std::min<std::size_t>((rest[0] & 0x7F) * 5, rest.size() - 1);
        frames.push_back({(rest[0] & 0x80) != 0, rest.subspan(1, len)});
        rest = rest.subspan(1 + len);
    }

    frame_encoder enc(512, threshold, 4);
    std::vector<std::uint8_t> wire;
    for (const auto &f : frames) {
        if (!enc.add(f.body, f.more)) {
            // Batch full: drain with partial writes, then the frame must fit.
            while (!enc.empty()) {
                std::size_t left = write_step;
                std::size_t taken = 0;
                for (const auto &b : enc.buffers()) {
                    const std::size_t k = std::min(left, b.size);
                    wire.insert(wire.end(), b.data, b.data + k);
                    left -= k;
                    taken += k;
                    if (left == 0)
                        break;
                }
                enc.consume(taken);
            }
            check(enc.add(f.body, f.more));
        }
    }
    for (const auto &b : enc.buffers())
        wire.insert(wire.end(), b.data, b.data + b.size);
    enc.consume(enc.pending_bytes());
    check(enc.empty());

    frame_decoder dec;
    std::span<const std::uint8_t> in(wire);
    std::vector<std::uint8_t> body;
    std::size_t i = 0;
    for (;;) {
        std::size_t used = 0;
        const auto s = dec.decode(in, used);
        in = in.subspan(used);
        if (s == frame_decoder::step::header) {
            body.assign(dec.header().size, 0);
            dec.set_body(body);
        } else if (s == frame_decoder::step::frame) {
            check(i < frames.size());
            check(dec.header().more() == frames[i].more);
            check(body.size() == frames[i].body.size());
            check(std::equal(body.begin(), body.end(), frames[i].body.begin()));
            ++i;
        } else {
            check(s == frame_decoder::step::need_more);
            break;
        }
    }
    check(i == frames.size());
    check(in.empty());
    return 0;
}
