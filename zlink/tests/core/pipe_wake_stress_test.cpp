// pipe_t's wake-ups under real threads: a writer that publishes runs of
// messages with flush(wake::later) and ends each run with flush() (as the
// engine's read loop does), a reader that sleeps whenever read() returns false
// and reads again only once its thread ran the activate_read (pipe.hpp).  A
// small HWM makes the writer stop and wait for activate_write too.  A lost
// wake-up is a thread that waits longer than the timeout for a command; every
// message must arrive once and in order.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <thread>

#include "core/executor.hpp"
#include "core/msg.hpp"
#include "core/pipe.hpp"

using zlink::command;
using zlink::msg_t;
using zlink::pipe_t;

namespace {

constexpr auto lost_after = std::chrono::seconds(5);  // a lost wake-up, not a slow host

// One thread's command queue: posted from the other thread, run by this one.
class waiting_executor final : public zlink::executor {
public:
    void post(command c) override {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            queue_.push_back(c);
        }
        ready_.notify_one();
    }
    // Waits for one command and runs it on `end`; false when none came.
    bool run_one(pipe_t *end) {
        command c{};
        {
            std::unique_lock<std::mutex> lock(mutex_);
            if (!ready_.wait_for(lock, lost_after, [this] { return !queue_.empty(); }))
                return false;
            c = queue_.front();
            queue_.pop_front();
        }
        end->process(c);
        return true;
    }
    // Runs what is queued without waiting.
    void run_queued(pipe_t *end) {
        for (;;) {
            command c{};
            {
                std::lock_guard<std::mutex> lock(mutex_);
                if (queue_.empty())
                    return;
                c = queue_.front();
                queue_.pop_front();
            }
            end->process(c);
        }
    }

private:
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<command> queue_;
};

struct stress_case {
    const char *name;
    int hwm;
    int max_run;          // messages per run of deferred flushes: 1..max_run
    std::uint32_t count;  // a small HWM costs a wait per few messages: fewer
};

class PipeWakeStress : public ::testing::TestWithParam<stress_case> {};

TEST_P(PipeWakeStress, NoWakeUpIsLostAcrossRunsOfDeferredFlushes) {
    const auto c = GetParam();
    const std::uint32_t count = c.count;
    waiting_executor writer_thread, reader_thread;
    auto pp = pipe_t::create_pair(&writer_thread, &reader_thread, c.hwm, c.hwm);
    pipe_t *writer = pp.a;
    pipe_t *reader = pp.b;

    std::uint32_t received = 0;
    bool reader_lost = false;
    std::thread reader_side([&] {
        msg_t m;
        while (received < count) {
            if (!reader->read(m)) {
                if (!reader_thread.run_one(reader)) {
                    reader_lost = true;
                    return;
                }
                continue;
            }
            std::uint32_t seq = 0;
            std::memcpy(&seq, m.data(), sizeof seq);
            m.close();
            if (seq != received)
                return;  // out of order: reported below
            ++received;
        }
    });

    std::mt19937 rng(42);
    std::uniform_int_distribution<int> run_length(1, c.max_run);
    bool writer_lost = false;
    std::uint32_t sent = 0;
    while (sent < count && !writer_lost) {
        const int run = run_length(rng);
        for (int i = 0; i < run && sent < count; ++i) {
            msg_t m;
            m.init_size(sizeof sent);
            std::memcpy(m.data(), &sent, sizeof sent);
            while (!writer->write(m)) {  // at the HWM: publish, wait for activate_write
                writer->flush();
                if (!writer_thread.run_one(writer)) {
                    writer_lost = true;
                    break;
                }
            }
            if (writer_lost) {
                m.close();
                break;
            }
            ++sent;
            // A full read in the middle of a run: publish, let the wake-up wait.
            writer->flush(pipe_t::wake::later);
            writer_thread.run_queued(writer);
        }
        writer->flush();  // the run's end: whatever wake-up is owed goes now
    }
    reader_side.join();
    writer_thread.run_queued(writer);
    reader_thread.run_queued(reader);
    msg_t rest;
    while (reader->read(rest))
        rest.close();
    pipe_t::discard_unused_pair(writer);

    EXPECT_FALSE(writer_lost) << "the writer waited for activate_write in vain";
    EXPECT_FALSE(reader_lost) << "the reader slept with " << count - received
                              << " messages still to come: a lost wake-up";
    EXPECT_EQ(received, count);
}

INSTANTIATE_TEST_SUITE_P(Runs, PipeWakeStress,
                         ::testing::Values(stress_case{"unlimited_short_runs", 0, 3, 100000},
                                           stress_case{"unlimited_long_runs", 0, 40, 100000},
                                           stress_case{"hwm4_long_runs", 4, 40, 10000},
                                           stress_case{"hwm64_short_runs", 64, 5, 50000}),
                         [](const ::testing::TestParamInfo<stress_case> &i) {
                             return std::string(i.param.name);
                         });

}  // namespace
