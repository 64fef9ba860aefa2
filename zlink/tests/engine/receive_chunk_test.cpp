// receive_chunk alone: where reads land, what stays buffered, and when a fresh
// chunk comes (transport/receive_chunk.hpp).  No socket: "a read" is a memcpy
// to read_target() followed by filled().
#include "transport/receive_chunk.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

using zlink::msg_t;
using zlink::receive_chunk;

namespace {

constexpr std::size_t batch = 256;

void read_into(receive_chunk &c, const std::string &bytes) {
    ASSERT_TRUE(c.prepare(batch));
    ASSERT_LE(bytes.size(), c.room(batch));
    std::memcpy(c.read_target(), bytes.data(), bytes.size());
    c.filled(bytes.size());
}

std::string buffered(receive_chunk &c) {
    auto b = c.buffered();
    return {reinterpret_cast<const char *>(b.data()), b.size()};
}

}  // namespace

TEST(ReceiveChunk, AFreshChunkHoldsSeveralBatchesAndAReadTakesAtMostOne) {
    receive_chunk c;
    ASSERT_TRUE(c.prepare(batch));
    EXPECT_EQ(c.capacity(), receive_chunk::batches * batch);
    EXPECT_EQ(c.room(batch), batch);
    EXPECT_EQ(c.pending(), 0u);
}

TEST(ReceiveChunk, ReadsAppendAndConsumeTakesFromTheFront) {
    receive_chunk c;
    read_into(c, "hello ");
    read_into(c, "world");
    EXPECT_EQ(buffered(c), "hello world");
    c.consume(6);
    EXPECT_EQ(buffered(c), "world");
    EXPECT_EQ(c.pending(), 5u);
}

TEST(ReceiveChunk, AChunkNobodyPointsIntoStartsOverOnceAllIsDecoded) {
    receive_chunk c;
    read_into(c, std::string(100, 'a'));
    const std::uint8_t *start = c.buffered().data();
    c.consume(100);
    ASSERT_TRUE(c.prepare(batch));
    EXPECT_EQ(c.read_target(), start) << "a chunk without windows is reused from its start";
}

TEST(ReceiveChunk, AWindowKeepsItsBytesAcrossLaterReadsAndAFreshChunk) {
    receive_chunk c;
    const std::string body(100, 'w');
    read_into(c, body);
    msg_t window;
    window.init();
    ASSERT_EQ(c.cut_window(window, body.size()), 0);
    c.consume(body.size());
    const std::uint8_t *after = c.read_target();
    ASSERT_TRUE(c.prepare(batch));
    EXPECT_EQ(c.read_target(), after)
        << "a chunk with windows must not be rewritten from its start";
    // Fill the chunk until a fresh one must come; the window still reads its bytes.
    for (int i = 0; i < 8; ++i) {
        read_into(c, std::string(batch, static_cast<char>('0' + i)));
        c.consume(batch);
    }
    EXPECT_EQ(std::string(static_cast<const char *>(window.data()), window.size()), body);
    window.close();
}

TEST(ReceiveChunk, UndecodedBytesMoveAlongToAFreshChunk) {
    receive_chunk c;
    msg_t window;
    window.init();
    read_into(c, std::string(64, 'x'));
    ASSERT_EQ(c.cut_window(window, 64), 0);  // pins the chunk: no start-over
    c.consume(64);
    std::size_t used = 64;
    while (c.capacity() - used >= batch) {  // leave less than one batch of room
        read_into(c, std::string(batch, 'f'));
        c.consume(batch);
        used += batch;
    }
    read_into(c, "tail");  // undecoded when the next read needs a fresh chunk
    ASSERT_TRUE(c.prepare(batch));
    EXPECT_EQ(buffered(c), "tail");
    EXPECT_EQ(c.room(batch), batch);
    window.close();
}

TEST(ReceiveChunk, AShrunkBatchGivesTheLargeChunkBack) {
    receive_chunk c;
    ASSERT_TRUE(c.prepare(4 * batch));
    EXPECT_EQ(c.capacity(), receive_chunk::batches * 4 * batch);
    ASSERT_TRUE(c.prepare(batch));  // more than twice what a 1-batch chunk needs
    EXPECT_EQ(c.capacity(), receive_chunk::batches * batch);
}

TEST(ReceiveChunk, DiscardForgetsWhatIsBuffered) {
    receive_chunk c;
    read_into(c, "dropped");
    c.discard();
    EXPECT_EQ(c.pending(), 0u);
}
