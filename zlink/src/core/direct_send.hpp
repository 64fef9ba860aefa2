// direct_send: the application thread writes a large message to the connection
// itself, when the connection's IO thread has nothing to write.
//
// Why: a message queued for the IO thread costs a hand-over (the pipe's
// activate_read through the IO thread's mailbox: an eventfd write, a wake-up,
// epoll_wait, the eventfd read) before its sendmsg.  With the IO thread idle that
// hand-over is all the queue does: one-core it is a context switch per message;
// with a core per side it delays every round trip's request and answer by the
// wake-up (docs/design/2026-12-03-caller-send.md, docs/profiling/2026-12-05-direct-send.md).
// nng tries the send on the caller's thread too; libzmq always queues.
//
// The rule that keeps order: the application thread (A) writes directly only
// when everything it queued before has been taken by the IO thread (I) (the
// pipe is drained and its reader asleep: pipe_t checks that) AND I has written
// all of it (idle(), under the mutex).  I claims the connection (claim()) before
// it pulls or writes anything, and gives it back (now_idle()) only when it found
// nothing to send; A holds the mutex for its whole sendmsg, so the two never
// write at once.  A write the kernel takes only in part is handed to I with what
// is left (claim() returns it), so later messages, which A queues while I owns
// the rest, follow it.  A write the kernel refuses whole (a full buffer, a
// broken connection) leaves the message to the pipe, as if nothing had been tried.
//
// Where: one-frame messages of at least min_bytes (small messages batch on I:
// a syscall each from A would cost streams their batching), on connections whose
// engine attached (ipc, no CURVE, not STREAM or SUB/XSUB: engine_output says so).
// The HWM does not count a message sent this way (it never entered the pipe).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>

#include "core/msg.hpp"
#include "wire/frame.hpp"

namespace zlink {

class direct_send {
public:
    static constexpr std::size_t min_bytes = 32 * 1024;

    direct_send() { rest_.init(); }
    ~direct_send() { rest_.close(); }
    direct_send(const direct_send &) = delete;
    direct_send &operator=(const direct_send &) = delete;

    // Whether a message may go this way at all (its shape, not the connection's state).
    static bool candidate(const msg_t &m) noexcept {
        return m.size() >= min_bytes && m.flags() == 0 && !m.is_delimiter();
    }

    // A: writes m if a connection is attached and idle.  true: m was written, or
    // written in part and the rest handed to the IO thread; m is left empty.
    // false: nothing was written; m is untouched (queue it).
    bool try_send(msg_t &m) noexcept;

    // What A left half written, for I to finish (claim()).
    struct rest {
        msg_t msg;                   // the message (its body is read until written)
        const std::uint8_t *header;  // its frame header, valid until now_idle()
        std::size_t header_size = 0;
        std::size_t written = 0;  // bytes of header + body already written
    };

    // I (the engine, once its handshake is done): A may write to fd from now on,
    // once I says it is idle; wake_io asks I, from A's thread, to run its output.
    void attach(const void *owner, int fd, std::function<void()> wake_io);
    // I: no more direct writes (the descriptor is about to close).  Waits for a
    // write in progress; a message left half written is dropped, as queued ones are
    // when a connection ends.  Only the owner that attached detaches.
    void detach(const void *owner) noexcept;
    // I: it is about to pull or write: A writes nothing until now_idle().  true
    // and out filled: A left a message half written, to be finished first.
    bool claim(rest &out) noexcept;
    // I: it found nothing to send and has nothing in flight.
    void now_idle() noexcept;

    // Messages written whole or in part by A (for tests).
    std::uint64_t sent() const noexcept { return sent_.load(std::memory_order_relaxed); }

private:
    std::mutex mutex_;
    std::atomic<bool> open_{false};  // also read without the mutex, as a hint
    bool idle_ = false;
    int fd_ = -1;
    const void *owner_ = nullptr;
    std::function<void()> wake_io_;
    msg_t rest_;  // valid when rest_written_ > 0
    std::size_t rest_written_ = 0;
    std::uint8_t header_[wire::max_header_size] = {};
    std::size_t header_size_ = 0;
    std::atomic<std::uint64_t> sent_{0};
};

}  // namespace zlink
