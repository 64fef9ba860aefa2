#include "handoff.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "../common/process.hpp"

namespace bench {

namespace {

// Bytes read but not yet taken by the application thread, and the time the reader
// started the clock. A mutex and a condition variable: the same futex wake-up a
// library's mailbox costs when its application thread sleeps.
class Pending {
public:
    void add(std::uint64_t n) {
        {
            std::lock_guard<std::mutex> lock(m_);
            bytes_ += n;
        }
        cv_.notify_one();
    }
    // Blocks until some bytes are pending; takes them all.
    std::uint64_t take() {
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, [this] { return bytes_ > 0; });
        return std::exchange(bytes_, 0);
    }

private:
    std::mutex m_;
    std::condition_variable cv_;
    std::uint64_t bytes_ = 0;
};

// The reading thread: blocking reads, the warm-up boundary kept exact as in the
// other ways of receiving; every read is handed over at once.
void read_into(RawSocket &s, std::uint64_t warm, std::uint64_t total, std::size_t chunk,
               Pending &out, Clock::time_point &start) {
    std::vector<char> buf(chunk);
    start = Clock::now();
    for (std::uint64_t got = 0; got < total;) {
        const std::uint64_t limit = got < warm ? warm - got : total - got;
        const std::size_t r = s.read_some(
            buf.data(), static_cast<std::size_t>(std::min<std::uint64_t>(chunk, limit)));
        if (r == 0)
            exit_timeout("the sender closed the connection during a throughput row");
        got += r;
        if (got == warm)
            start = Clock::now();
        out.add(r);
    }
}

}  // namespace

HandoffResult receive_with_handoff(RawSocket &s, std::uint64_t warm, std::uint64_t count,
                                   std::size_t chunk) {
    Pending pending;
    HandoffResult result;
    std::thread reader([&] { read_into(s, warm, warm + count, chunk, pending, result.start); });
    for (std::uint64_t taken = 0; taken < warm + count;)
        taken += pending.take();
    result.end = Clock::now();
    reader.join();
    result.counted_bytes = count;
    return result;
}

}  // namespace bench
