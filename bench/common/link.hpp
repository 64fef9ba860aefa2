// How the two sides of a benchmark tell each other where they are.
//
// The sender side and the receiver side run the same code whether they are two
// threads of one process or two processes (possibly on two hosts). They coordinate
// (endpoints, handshake done, warm-up barrier, end of run) only through a Link.
// In one process a Link is a pair of mailboxes in memory; across processes it is a
// plain TCP or Unix-domain control connection (control.hpp), the same code for every
// library. Nothing in a Link is ever used inside a timed window.
#pragma once

#include <array>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace bench {

// Each signal goes one way and is posted at most once per run, except in the arms
// bench, where the phase signals (b_got_sync .. thr_done) come once per arm or per
// slice, strictly one after the other: a signal is always taken before it comes again.
enum class Signal : int {
    hello,       // receiver -> sender: its settings and bound endpoints
    hello_ok,    // sender -> receiver: settings agree, the sender side is connected
    b_got_sync,  // receiver -> sender: a handshake message a->b arrived
    a_got_sync,  // sender -> receiver: a handshake message b->a arrived
    go,          // receiver -> sender: all but the last warm-up message arrived
    sent,        // sender -> receiver: the sender's throughput seconds
    thr_done,    // receiver -> sender: every throughput message arrived (receiver seconds)
    finished,    // sender -> receiver: the sender needs nothing more from the receiver
    slice,       // sender -> receiver (arms bench): the next slice ("round arm kind"), or "end"
    count_
};

const char *to_string(Signal s);
bool signal_from_string(const std::string &name, Signal &out);

// Signals that arrived and have not been taken yet. Thread-safe.
class Mailbox {
public:
    void put(Signal s, std::string payload);
    // Blocks until `s` arrived and takes it. The watchdog ends a wait that never ends.
    std::string take(Signal s);
    // Takes `s` if it arrives within wait_ms.
    std::optional<std::string> try_take(Signal s, int wait_ms);

private:
    std::mutex m_;
    std::condition_variable cv_;
    std::array<std::optional<std::string>, static_cast<int>(Signal::count_)> slots_;
};

class Link {
public:
    virtual ~Link() = default;
    virtual void post(Signal s, const std::string &payload = "") = 0;
    // Tells the peer this side will not run, and why (before this side exits 2).
    virtual void refuse(const std::string & /*reason*/) {}
    std::string wait(Signal s) { return inbox().take(s); }
    std::optional<std::string> poll(Signal s, int wait_ms) { return inbox().try_take(s, wait_ms); }

protected:
    virtual Mailbox &inbox() = 0;
};

// The two ends of an in-process link (one per side thread).
struct ThreadLinks {
    std::unique_ptr<Link> sender, receiver;
};
ThreadLinks make_thread_links();

}  // namespace bench
