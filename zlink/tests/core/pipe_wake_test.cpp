// pipe_t's wake-ups: one activate_read per sleep of the reader, and a flush
// that lets the wake-up wait (flush(wake::later)) sends it with the next
// flush, never twice and never not at all.
//
// The reader's end follows pipe.hpp's contract: after read() returned false
// it reads again only once its thread has run the activate_read (process()),
// which wake_reader() does here for the commands the writer posted.
#include <gtest/gtest.h>

#include <cstring>

#include <vector>

#include "core/executor.hpp"
#include "core/msg.hpp"
#include "core/pipe.hpp"

using zlink::command;
using zlink::command_kind;
using zlink::msg_t;
using zlink::pipe_t;

namespace {

// Keeps what is posted to one end's thread instead of running it.
class recording_executor final : public zlink::executor {
public:
    void post(command c) override { posted.push_back(c); }
    int count(command_kind k) const {
        int n = 0;
        for (const auto &c : posted)
            n += c.kind == k;
        return n;
    }
    std::vector<command> posted;
};

class PipeWake : public ::testing::Test {
protected:
    void SetUp() override {
        auto pp = pipe_t::create_pair(&writer_thread, &reader_thread, 0, 0);
        writer = pp.a;
        reader = pp.b;
    }
    void TearDown() override {
        msg_t m;
        while (reader->read(m))
            m.close();
        pipe_t::discard_unused_pair(writer);
    }
    void write_one(const char *text) {
        msg_t m;
        m.init_buffer(text, std::strlen(text));
        ASSERT_TRUE(writer->write(m));
    }
    int wakes() const { return reader_thread.count(command_kind::activate_read); }
    // Runs what was posted to the reader's thread, as that thread would.
    void wake_reader() {
        for (const auto &c : reader_thread.posted)
            reader->process(c);
        delivered_ += reader_thread.posted.size();
        reader_thread.posted.clear();
    }
    int delivered() const { return static_cast<int>(delivered_); }

    recording_executor writer_thread, reader_thread;
    std::size_t delivered_ = 0;
    pipe_t *writer = nullptr;
    pipe_t *reader = nullptr;
};

TEST_F(PipeWake, AWakeUpLeftForLaterGoesWithTheNextFlush) {
    msg_t m;
    ASSERT_FALSE(reader->read(m));  // empty: the reader sleeps
    write_one("a");
    writer->flush(pipe_t::wake::later);
    EXPECT_EQ(wakes(), 0) << "the wake-up was to wait";
    write_one("b");
    writer->flush(pipe_t::wake::later);
    EXPECT_EQ(wakes(), 0);
    writer->flush();  // nothing new to publish: the owed wake-up alone
    EXPECT_EQ(wakes(), 1);
    writer->flush();
    EXPECT_EQ(wakes(), 1) << "one wake-up per sleep";
    // Without its wake-up the sleeping reader reads nothing (pipe.hpp)...
    ASSERT_FALSE(reader->read(m));
    // ...and with it, both messages the deferred flushes published.
    wake_reader();
    ASSERT_TRUE(reader->read(m));
    m.close();
    ASSERT_TRUE(reader->read(m));
    m.close();
    ASSERT_FALSE(reader->read(m));
}

TEST_F(PipeWake, AFlushToAnAwakeReaderOwesNothing) {
    write_one("a");
    writer->flush(pipe_t::wake::later);  // the reader never slept
    writer->flush();
    EXPECT_EQ(wakes(), 0);
}

TEST_F(PipeWake, EachSleepOfTheReaderGetsExactlyOneWakeUp) {
    msg_t m;
    for (int round = 1; round <= 3; ++round) {
        ASSERT_FALSE(reader->read(m));  // drained: asleep again
        write_one("x");
        writer->flush(pipe_t::wake::later);
        writer->flush(pipe_t::wake::later);
        writer->flush();
        EXPECT_EQ(wakes(), 1) << "round " << round;
        wake_reader();
        EXPECT_EQ(delivered(), round);
        ASSERT_TRUE(reader->read(m));
        m.close();
    }
}

TEST_F(PipeWake, AnImmediateFlushWakesAtOnceAsBefore) {
    msg_t m;
    ASSERT_FALSE(reader->read(m));
    write_one("a");
    writer->flush();
    EXPECT_EQ(wakes(), 1);
}

}  // namespace
