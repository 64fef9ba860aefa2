// Frame decoder against RFC 37 "Framing": byte-exact vectors, every split point,
// long frames, size limit, malformed input.
#include "wire/frame_decoder.hpp"

#include "test_bytes.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace zlink::wire {
namespace {

using test::bytes;
using test::cat;
using test::decode_chunks;
using test::decoded_frame;
using test::repeat;

bytes body_of(std::size_t n) {
    bytes b(n);
    for (std::size_t i = 0; i < n; ++i)
        b[i] = static_cast<std::uint8_t>(i * 7 + 1);
    return b;
}

struct decode_case {
    const char *name;
    bytes wire;
    std::vector<decoded_frame> frames;
};

class DecoderVectors : public ::testing::TestWithParam<decode_case> {};

// Every case is decoded whole, split in two at every point, and byte by byte.
TEST_P(DecoderVectors, EverySplitPoint) {
    const auto &c = GetParam();
    for (std::size_t split = 0; split <= c.wire.size(); ++split) {
        frame_decoder dec;
        const auto r = decode_chunks(dec, {bytes(c.wire.begin(), c.wire.begin() + split),
                                           bytes(c.wire.begin() + split, c.wire.end())});
        ASSERT_EQ(r.error, wire_error::none) << "split " << split;
        ASSERT_EQ(r.frames, c.frames) << "split " << split;
    }
    std::vector<bytes> singles;
    for (auto b : c.wire)
        singles.push_back({b});
    frame_decoder dec;
    const auto r = decode_chunks(dec, singles);
    EXPECT_EQ(r.error, wire_error::none);
    EXPECT_EQ(r.frames, c.frames);
}

const bytes hello = {'h', 'e', 'l', 'l', 'o'};

INSTANTIATE_TEST_SUITE_P(
    Cases, DecoderVectors,
    ::testing::Values(
        // "message-last = ( %x00 short-size | %x02 long-size ) message-body"
        decode_case{"short_last", cat({{0x00, 0x05}, "hello"}), {{0x00, hello}}},
        // "message-more = ( %x01 short-size | %x03 long-size ) message-body"
        decode_case{
            "multipart", cat({{0x01, 0x05}, "hello", {0x00, 0x00}}), {{0x01, hello}, {0x00, {}}}},
        // "The size does not include the flags field, nor itself, so an empty frame
        // has a size of zero."
        decode_case{"empty", {0x00, 0x00}, {{0x00, {}}}},
        decode_case{"three_empty",
                    {0x01, 0x00, 0x01, 0x00, 0x00, 0x00},
                    {{0x01, {}}, {0x01, {}}, {0x00, {}}}},
        // "A short frame has a body of 0 to 255 octets."
        decode_case{"short_255", cat({{0x00, 0xFF}, body_of(255)}), {{0x00, body_of(255)}}},
        // "A value of 1 indicates that the frame size is encoded as a 64-bit unsigned
        // integer in network byte order."
        decode_case{"long_256",
                    cat({{0x02, 0, 0, 0, 0, 0, 0, 1, 0}, body_of(256)}),
                    {{0x02, body_of(256)}}},
        decode_case{"long_more_300",
                    cat({{0x03, 0, 0, 0, 0, 0, 0, 1, 0x2C}, body_of(300), {0x00, 0x01, 'x'}}),
                    {{0x03, body_of(300)}, {0x00, {'x'}}}},
        // libzmq never sends it, but the grammar allows a long size for a small body.
        decode_case{
            "long_small", cat({{0x02, 0, 0, 0, 0, 0, 0, 0, 3}, "abc"}), {{0x02, {'a', 'b', 'c'}}}},
        // "command-size = %x04 short-size | %x06 long-size"
        decode_case{"command_short",
                    cat({{0x04, 0x06}, {0x04}, "PING", {0x00}}),
                    {{0x04, {0x04, 'P', 'I', 'N', 'G', 0x00}}}},
        decode_case{"command_long",
                    cat({{0x06, 0, 0, 0, 0, 0, 0, 1, 0}, body_of(256)}),
                    {{0x06, body_of(256)}}}),
    [](const auto &info) { return std::string(info.param.name); });

// A 1 MiB body read in place: the decoder only asks for the header, then the caller
// reads straight into body_remaining() (simulating socket reads of odd sizes).
TEST(Decoder, LargeBodyZeroCopyPath) {
    const std::size_t n = 1 << 20;
    const bytes payload = body_of(n);
    const bytes header = {0x02, 0, 0, 0, 0, 0, 0x10, 0, 0};
    frame_decoder dec;
    std::size_t used = 0;
    ASSERT_EQ(dec.decode(header, used), frame_decoder::step::header);
    EXPECT_EQ(used, header.size());
    EXPECT_EQ(dec.header().size, n);
    EXPECT_TRUE(dec.header().long_size());
    bytes dst(n);
    dec.set_body(dst);
    std::size_t off = 0;
    const std::size_t read_sizes[] = {1, 4095, 65536, 7};
    for (int i = 0; off < n; ++i) {
        auto rem = dec.body_remaining();
        ASSERT_EQ(rem.size(), n - off);
        ASSERT_EQ(rem.data(), dst.data() + off) << "reads must land in the caller's buffer";
        const std::size_t k = std::min(read_sizes[i % 4], rem.size());
        std::memcpy(rem.data(), payload.data() + off, k);
        off += k;
        const auto s = dec.body_filled(k);
        EXPECT_EQ(s, off == n ? frame_decoder::step::frame : frame_decoder::step::need_more);
    }
    EXPECT_EQ(dst, payload);
    EXPECT_TRUE(dec.body_remaining().empty());
    // The decoder is ready for the next frame.
    const bytes next = {0x00, 0x01, 'z'};
    ASSERT_EQ(dec.decode(next, used), frame_decoder::step::header);
}

// Mixed: part of the body arrives in the read buffer (copied), the rest is read in place.
TEST(Decoder, BodyPartlyCopiedThenReadInPlace) {
    const bytes payload = body_of(1000);
    const bytes wire =
        cat({{0x02, 0, 0, 0, 0, 0, 0, 0x03, 0xE8}, bytes(payload.begin(), payload.begin() + 100)});
    frame_decoder dec;
    std::size_t used = 0;
    std::span<const std::uint8_t> in(wire);
    ASSERT_EQ(dec.decode(in, used), frame_decoder::step::header);
    bytes dst(1000);
    dec.set_body(dst);
    ASSERT_EQ(dec.decode(in.subspan(used), used), frame_decoder::step::need_more);
    EXPECT_EQ(used, 100u);
    auto rem = dec.body_remaining();
    ASSERT_EQ(rem.size(), 900u);
    std::memcpy(rem.data(), payload.data() + 100, 900);
    EXPECT_EQ(dec.body_filled(900), frame_decoder::step::frame);
    EXPECT_EQ(dst, payload);
}

// skip_body(): the caller keeps the body where it lies in its input (a message
// pointing into a shared receive buffer); the decoder consumes it without copying.
TEST(Decoder, SkipBodyConsumesTheBodyInPlaceAndGoesOn) {
    const bytes payload = body_of(300);
    const bytes wire = cat({{0x03, 0, 0, 0, 0, 0, 0, 0x01, 0x2C}, payload, {0x00, 0x01, 'z'}});
    frame_decoder dec;
    std::size_t used = 0;
    std::span<const std::uint8_t> in(wire);
    ASSERT_EQ(dec.decode(in, used), frame_decoder::step::header);
    in = in.subspan(used);
    const std::uint8_t *body_at = in.data();
    dec.skip_body();
    EXPECT_TRUE(dec.body_remaining().empty());
    ASSERT_EQ(dec.decode(in, used), frame_decoder::step::frame);
    EXPECT_EQ(used, 300u);
    EXPECT_TRUE(dec.header().more());
    EXPECT_EQ(bytes(body_at, body_at + 300), payload);
    in = in.subspan(used);
    ASSERT_EQ(dec.decode(in, used), frame_decoder::step::header);
    EXPECT_EQ(dec.header().size, 1u);
}

// A skipped body split over two inputs is consumed across both.
TEST(Decoder, SkipBodyAcrossInputs) {
    const bytes wire = cat({{0x00, 0x05}, "hel"});
    frame_decoder dec;
    std::size_t used = 0;
    ASSERT_EQ(dec.decode(wire, used), frame_decoder::step::header);
    dec.skip_body();
    ASSERT_EQ(dec.decode(std::span(wire).subspan(2), used), frame_decoder::step::need_more);
    EXPECT_EQ(used, 3u);
    const bytes rest = {'l', 'o', 0x00, 0x00};
    ASSERT_EQ(dec.decode(rest, used), frame_decoder::step::frame);
    EXPECT_EQ(used, 2u);
}

// The decoder refuses to consume body octets before the caller supplied a buffer.
TEST(Decoder, WaitsForSetBody) {
    const bytes wire = cat({{0x00, 0x02}, "ab"});
    frame_decoder dec;
    std::size_t used = 0;
    ASSERT_EQ(dec.decode(wire, used), frame_decoder::step::header);
    EXPECT_EQ(used, 2u);
    EXPECT_EQ(dec.decode(std::span(wire).subspan(2), used), frame_decoder::step::header);
    EXPECT_EQ(used, 0u);
}

TEST(Decoder, SetBodyOfWrongSizeFailsInsteadOfOverrunning) {
    const bytes wire = cat({{0x00, 0x02}, "ab"});
    frame_decoder dec;
    std::size_t used = 0;
    ASSERT_EQ(dec.decode(wire, used), frame_decoder::step::header);
    bytes small(1);
    dec.set_body(small);
    EXPECT_EQ(dec.decode(std::span(wire).subspan(2), used), frame_decoder::step::error);
    EXPECT_EQ(dec.error(), wire_error::buffer_too_small);
}

struct limit_case {
    const char *name;
    std::uint64_t max;
    bytes wire;
    bool ok;
};

class DecoderLimit : public ::testing::TestWithParam<limit_case> {};

// ZMQ_MAXMSGSIZE semantics: a frame larger than the limit is refused at its header,
// before a single body octet is accepted; a frame at the limit passes.
TEST_P(DecoderLimit, AppliesPerFrame) {
    const auto &c = GetParam();
    frame_decoder dec(c.max);
    const auto r = decode_chunks(dec, {c.wire});
    if (c.ok) {
        EXPECT_EQ(r.error, wire_error::none);
        EXPECT_EQ(r.frames.size(), 1u);
    } else {
        EXPECT_EQ(r.error, wire_error::frame_too_large);
        EXPECT_TRUE(r.frames.empty());
    }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DecoderLimit,
    ::testing::Values(limit_case{"at_limit_short", 5, cat({{0x00, 0x05}, "hello"}), true},
                      limit_case{"over_limit_short", 4, cat({{0x00, 0x05}, "hello"}), false},
                      limit_case{"zero_limit_empty_ok", 0, {0x00, 0x00}, true},
                      limit_case{"zero_limit_one_byte", 0, {0x00, 0x01, 'x'}, false},
                      // Header alone: refused without the 1 MiB body ever arriving.
                      limit_case{"over_limit_long", 1000, {0x02, 0, 0, 0, 0, 0, 0x10, 0, 0}, false},
                      limit_case{"command_over_limit", 3, cat({{0x04, 0x05}, {0x04}, "PING"}),
                                 false}),
    [](const auto &info) { return std::string(info.param.name); });

struct bad_case {
    const char *name;
    bytes wire;
    wire_error error;
    std::size_t frames_before;
};

class DecoderRejects : public ::testing::TestWithParam<bad_case> {};

TEST_P(DecoderRejects, WithError) {
    const auto &c = GetParam();
    frame_decoder dec;
    const auto r = decode_chunks(dec, {c.wire});
    EXPECT_EQ(r.error, c.error) << to_string(r.error);
    EXPECT_EQ(r.frames.size(), c.frames_before);
    // Failure is sticky: more input yields the same error, nothing consumed.
    std::size_t used = 1;
    EXPECT_EQ(dec.decode(c.wire, used), frame_decoder::step::error);
    EXPECT_EQ(used, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DecoderRejects,
    ::testing::Values(
        // "Bits 7-3 are reserved for future use and MUST be zero."
        bad_case{"reserved_bit3", {0x08, 0x00}, wire_error::reserved_flags_set, 0},
        bad_case{"reserved_bit7", {0x80, 0x00}, wire_error::reserved_flags_set, 0},
        bad_case{"garbage_after_frame", cat({{0x00, 0x01, 'a'}, {0xFF, 0xFF}}),
                 wire_error::reserved_flags_set, 1},
        // "This bit SHALL be zero on command frames."
        bad_case{"command_more", {0x05, 0x00}, wire_error::command_with_more, 0},
        bad_case{
            "command_more_long", {0x07, 0, 0, 0, 0, 0, 0, 0, 0}, wire_error::command_with_more, 0},
        // "A long frame has a body of 0 to 2^63-1 octets."
        bad_case{
            "long_2pow63", {0x02, 0x80, 0, 0, 0, 0, 0, 0, 0}, wire_error::frame_size_overflow, 0},
        bad_case{"long_max",
                 {0x02, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF},
                 wire_error::frame_size_overflow,
                 0}),
    [](const auto &info) { return std::string(info.param.name); });

// Truncated input is not an error for the decoder (more may come): it reports
// need_more and keeps the partial state; the engine decides on EOF.
TEST(Decoder, TruncatedFrameWaits) {
    const bytes wire = cat({{0x02, 0, 0, 0, 0, 0, 0, 0x01}});
    frame_decoder dec;
    std::size_t used = 0;
    EXPECT_EQ(dec.decode(wire, used), frame_decoder::step::need_more);
    EXPECT_EQ(used, wire.size());
    EXPECT_EQ(dec.header_bytes_missing(), 1u);
    const bytes rest = {0x00};
    EXPECT_EQ(dec.decode(rest, used), frame_decoder::step::header);
    EXPECT_EQ(dec.header().size, 256u);
}

TEST(Decoder, HeaderBytesMissing) {
    frame_decoder dec;
    EXPECT_EQ(dec.header_bytes_missing(), 1u);
    std::size_t used = 0;
    const bytes f = {0x02};
    dec.decode(f, used);
    EXPECT_EQ(dec.header_bytes_missing(), 8u);
}

}  // namespace
}  // namespace zlink::wire
