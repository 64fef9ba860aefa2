// SendRing: the buffers of the zero-copy send path (--send-buffers N).
//
// Why: zmq_send copies the payload into a message, a copy the plain socket pump
// does not make; zmq_msg_init_data + zmq_msg_send hand the library the caller's
// buffer instead, and the library calls back when it no longer needs it. A
// zero-copy sender reuses its buffers, so the ring holds N of them, taken in turn:
// taking one that is still in flight waits until the library frees it, which bounds
// the messages in flight at N (the application's own flow control, as a zero-copy
// program has). Both libraries run this same code.
//
// The free callback may run on any thread (an IO thread once the bytes are written,
// or the receiving thread for inproc); a buffer's state is an atomic the sending
// thread waits on.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace bench {

class SendRing {
public:
    SendRing(std::size_t buffers, std::size_t size);
    SendRing(const SendRing &) = delete;
    SendRing &operator=(const SendRing &) = delete;

    struct Slot {
        std::atomic<bool> in_flight{false};
        std::vector<std::uint8_t> bytes;
    };
    // The next buffer in turn, once the library has freed it (waits, without a
    // timeout: a message the library never frees is the library's bug, and the
    // bench's watchdog ends a run that stops making progress).
    Slot &next();
    // zmq_free_fn for zmq_msg_init_data; hint = the Slot.
    static void release(void *data, void *hint);
    // The buffers taken so far that had to wait for the library (a diagnostic).
    std::uint64_t waits() const { return waits_; }
    std::size_t size() const { return slots_.size(); }
    // A new ring that lives until the process ends. The library may free a message
    // (call release) until its context is terminated, which the bench does after the
    // End that sent it is gone (runner.cpp, arms_runner.cpp shut_down), so a ring is
    // never destroyed: one per sending End, a few MiB at most.
    static SendRing &make_for_process(std::size_t buffers, std::size_t size);

private:
    std::vector<std::unique_ptr<Slot>> slots_;
    std::size_t next_ = 0;
    std::uint64_t waits_ = 0;
};

}  // namespace bench
