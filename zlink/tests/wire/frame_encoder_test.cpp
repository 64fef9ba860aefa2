// Frame encoder: byte-exact output, batching, scatter/gather without copies of large
// bodies, partial writes.
#include "wire/frame_encoder.hpp"

#include "test_bytes.hpp"

#include <gtest/gtest.h>

#include <functional>

namespace zlink::wire {
namespace {

using test::as_span;
using test::bytes;
using test::cat;
using test::repeat;

bytes flatten(const frame_encoder &enc) {
    bytes out;
    for (const auto &b : enc.buffers())
        out.insert(out.end(), b.data, b.data + b.size);
    return out;
}

struct encode_case {
    const char *name;
    std::function<bool(frame_encoder &)> add;
    bytes wire;
};

class EncoderVectors : public ::testing::TestWithParam<encode_case> {};

TEST_P(EncoderVectors, ByteExact) {
    frame_encoder enc;
    ASSERT_TRUE(GetParam().add(enc));
    EXPECT_EQ(flatten(enc), GetParam().wire);
    EXPECT_EQ(enc.pending_bytes(), GetParam().wire.size());
}

const bytes big = repeat(0xAB, 256);
const bytes topic_ab = {'a', 'b'};
const bytes ctx_x = {'x'};

INSTANTIATE_TEST_SUITE_P(
    Cases, EncoderVectors,
    ::testing::Values(
        // "message-last = ( %x00 short-size | %x02 long-size ) message-body"
        encode_case{"short_last", [](auto &e) { return e.add(as_span("hello"), false); },
                    cat({{0x00, 0x05}, "hello"})},
        // "message-more = ( %x01 short-size | %x03 long-size ) message-body"
        encode_case{"short_more", [](auto &e) { return e.add(as_span("hello"), true); },
                    cat({{0x01, 0x05}, "hello"})},
        encode_case{"empty", [](auto &e) { return e.add({}, false); }, {0x00, 0x00}},
        // "If the body is 256 or more octets, the command SHOULD use a long size field"
        // (libzmq applies the same threshold to messages).
        encode_case{"long_256", [](auto &e) { return e.add(big, true); },
                    cat({{0x03, 0, 0, 0, 0, 0, 0, 1, 0}, big})},
        encode_case{"short_255", [](auto &e) { return e.add(std::span(big).first(255), false); },
                    cat({{0x00, 0xFF}, repeat(0xAB, 255)})},
        // "subscribe = command-size %d9 "SUBSCRIBE" subscription"
        encode_case{"subscribe_31",
                    [](auto &e) { return e.add_subscription(true, topic_ab, {3, 1}); },
                    cat({{0x04, 0x0C, 0x09}, "SUBSCRIBE", "ab"})},
        // "cancel = command-size %d6 "CANCEL" subscription"
        encode_case{"cancel_31",
                    [](auto &e) { return e.add_subscription(false, topic_ab, {3, 1}); },
                    cat({{0x04, 0x09, 0x06}, "CANCEL", "ab"})},
        // RFC 23 (ZMTP 3.0) / libzmq: subscription message, first octet 1 or 0.
        encode_case{"subscribe_30",
                    [](auto &e) { return e.add_subscription(true, topic_ab, {3, 0}); },
                    cat({{0x00, 0x03, 0x01}, "ab"})},
        encode_case{"cancel_30",
                    [](auto &e) { return e.add_subscription(false, topic_ab, {3, 0}); },
                    cat({{0x00, 0x03, 0x00}, "ab"})},
        encode_case{"subscribe_all_31",
                    [](auto &e) { return e.add_subscription(true, {}, {3, 1}); },
                    cat({{0x04, 0x0A, 0x09}, "SUBSCRIBE"})},
        // "ping = command-size %d4 "PING" ping-ttl ping-context"
        encode_case{"ping", [](auto &e) { return e.add_ping(100, ctx_x); },
                    cat({{0x04, 0x08, 0x04}, "PING", {0x00, 0x64}, "x"})},
        encode_case{"ping_ttl_max", [](auto &e) { return e.add_ping(0xFFFF, {}); },
                    cat({{0x04, 0x07, 0x04}, "PING", {0xFF, 0xFF}})},
        // "pong = command-size %d4 "PONG" ping-context"
        encode_case{"pong", [](auto &e) { return e.add_pong(ctx_x); },
                    cat({{0x04, 0x06, 0x04}, "PONG", "x"})},
        encode_case{"raw", [](auto &e) { return e.add_raw(topic_ab); }, topic_ab}),
    [](const auto &info) { return std::string(info.param.name); });

// "ping-context = 0*16OCTET"
TEST(Encoder, PingContextOver16Refused) {
    frame_encoder enc;
    const bytes ctx17 = repeat(1, 17);
    EXPECT_FALSE(enc.add_ping(1, ctx17));
    EXPECT_FALSE(enc.add_pong(ctx17));
    EXPECT_TRUE(enc.empty());
    EXPECT_TRUE(enc.add_ping(1, std::span(ctx17).first(16)));
}

// Small frames are batched into one contiguous gather entry (one write syscall).
TEST(Encoder, SmallFramesShareOneBuffer) {
    frame_encoder enc;
    for (int i = 0; i < 100; ++i)
        ASSERT_TRUE(enc.add(as_span("0123456789"), i % 2 == 0));
    EXPECT_EQ(enc.buffers().size(), 1u);
    EXPECT_EQ(enc.pending_bytes(), 100u * 12);
}

// A large body is referenced in place, never copied.
TEST(Encoder, LargeBodyIsReferencedNotCopied) {
    frame_encoder enc(8192, 256);
    const bytes body = repeat(0x5A, 1 << 20);
    ASSERT_TRUE(enc.add(as_span("head"), true));
    ASSERT_TRUE(enc.add(body, true));
    ASSERT_TRUE(enc.add(as_span("tail"), false));
    const auto bufs = enc.buffers();
    ASSERT_EQ(bufs.size(), 3u);
    EXPECT_EQ(bufs[1].data, body.data());
    EXPECT_EQ(bufs[1].size, body.size());
    EXPECT_EQ(
        flatten(enc),
        cat({{0x01, 0x04}, "head", {0x03, 0, 0, 0, 0, 0, 0x10, 0, 0}, body, {0x00, 0x04}, "tail"}));
}

// The staging area can be resized between batches (the engine's adaptive
// batch), never while bytes are pending.
TEST(Encoder, StagingResizesOnlyBetweenBatches) {
    frame_encoder enc(1024, 256);
    const bytes small = repeat(0x11, 200);
    int fit = 0;
    while (enc.add(small, false))
        ++fit;
    EXPECT_EQ(fit, 1024 / 202);
    EXPECT_FALSE(enc.resize_staging(8192)) << "resized under pending bytes";
    EXPECT_EQ(enc.staging_capacity(), 1024u);
    enc.consume(enc.pending_bytes());
    ASSERT_TRUE(enc.resize_staging(8192));
    EXPECT_EQ(enc.staging_capacity(), 8192u);
    int more = 0;
    while (more < 1000 && enc.add(small, false))
        ++more;
    EXPECT_EQ(more, 8192 / 202);
    const bytes wire = flatten(enc);
    EXPECT_EQ(wire.size(), static_cast<std::size_t>(more) * 202);
    EXPECT_EQ(bytes(wire.begin(), wire.begin() + 202), cat({{0x00, 200}, small}));
    enc.consume(enc.pending_bytes());
    ASSERT_TRUE(enc.resize_staging(16));  // raised to fit one header + copied body
    EXPECT_GE(enc.staging_capacity(), 256u + 9);
    EXPECT_TRUE(enc.add(small, false));
}

// Partial writes: consume() in odd steps reproduces the exact byte stream.
TEST(Encoder, PartialWritesAtEveryStep) {
    const bytes body = repeat(0x33, 1000);
    for (std::size_t step : {1u, 2u, 3u, 7u, 255u, 1009u}) {
        frame_encoder enc(1024, 100);
        ASSERT_TRUE(enc.add(as_span("a"), true));
        ASSERT_TRUE(enc.add(body, true));
        ASSERT_TRUE(enc.add(as_span("bc"), false));
        const bytes want = flatten(enc);
        bytes got;
        while (!enc.empty()) {
            std::size_t left = step;
            for (const auto &b : enc.buffers()) {
                const std::size_t k = std::min(left, b.size);
                got.insert(got.end(), b.data, b.data + k);
                left -= k;
                if (left == 0)
                    break;
            }
            enc.consume(std::min(step, enc.pending_bytes()));
        }
        EXPECT_EQ(got, want) << "step " << step;
        EXPECT_TRUE(enc.buffers().empty());
        // After a full flush the staging buffer is reused from the start.
        EXPECT_TRUE(enc.add(as_span("again"), false));
        EXPECT_EQ(flatten(enc), cat({{0x00, 0x05}, "again"}));
    }
}

// A full batch refuses the next frame (nothing appended), and any frame fits an
// empty batch.
TEST(Encoder, FullBatchRefusesThenAcceptsAfterFlush) {
    frame_encoder enc(600, 256, 3);  // capacity raised to fit header+prefix+threshold
    const bytes small = repeat(7, 200);
    int added = 0;
    while (enc.add(small, true))
        ++added;
    ASSERT_GT(added, 0);
    const std::size_t before = enc.pending_bytes();
    EXPECT_FALSE(enc.add(small, true));
    EXPECT_EQ(enc.pending_bytes(), before);
    enc.consume(before);
    EXPECT_TRUE(enc.add(small, true));
    // Gather list limit: 3 entries fit staged + one reference only.
    frame_encoder enc2(8192, 16, 3);
    const bytes large = repeat(1, 100);
    EXPECT_TRUE(enc2.add(large, true));
    EXPECT_FALSE(enc2.add(large, true));
}

}  // namespace
}  // namespace zlink::wire
