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
// Where: messages whose last frame has at least min_bytes, in at most max_frames
// frames (small messages batch on I: a syscall each from A would cost streams
// their batching; REQ and REP send a delimiter frame before the body), on
// connections whose engine attached (ipc; tcp only at SNDHWM 0, as its kernel
// buffers would hold megabytes the HWM does not see; no CURVE, not STREAM or
// SUB/XSUB: engine_output says so).
//
// How A cuts its write: as I would cut a lone batch of the same bytes.  Over tcp
// I's first sendmsg of a batch may be short (transport/write_cap.hpp,
// peer_pause.hpp, paced_split.hpp) and every one capped (ZMQ_ASIO_TCP_MAX_TRANSFER);
// the engine gives A that rule (cut_rule) and A writes the pieces back to back.
// peer_pause's trip through epoll between the first 8 KiB and the rest is the one
// difference: A does not wait for it (handing the rest to I would cost the wake-up
// direct sending avoids).
// The HWM does not count a message sent this way (it never entered the pipe): over
// ipc the socket's 256 KiB send buffer bounds what it adds.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>

#include "core/gather_list.hpp"
#include "core/msg.hpp"
#include "wire/frame.hpp"

namespace zlink {

class direct_send {
public:
    static constexpr std::size_t min_bytes = 32 * 1024;  // of the message's last frame
    static constexpr std::size_t max_frames = 4;         // REQ/REP: delimiter and body

    direct_send() {
        for (auto &m : rest_)
            m.init();
        gather_.reserve(2 * max_frames);  // try_send allocates nothing
    }
    ~direct_send() { drop_rest(); }
    direct_send(const direct_send &) = delete;
    direct_send &operator=(const direct_send &) = delete;

    // Whether a frame may go this way (its shape, not the connection's state):
    // a message frame (not a command, a routing id or a pipe's delimiter); MORE
    // and a shared body (zmq_msg_copy, PUB's fan-out) are fine.
    static bool candidate_frame(const msg_t &m) noexcept {
        return (m.flags() & (msg_t::command | msg_t::routing_id)) == 0 && !m.is_delimiter();
    }

    // A: writes the count frames of one message (all but the last with MORE) if a
    // connection is attached and idle.  true: written, or written in part and the
    // rest handed to the IO thread; the frames are left empty.  false: nothing was
    // written; the frames are untouched (queue them).
    bool try_send(msg_t *frames, std::size_t count) noexcept;

    // What A left half written, for I to finish (claim()): its frames and their
    // headers (valid until I calls now_idle()), and how many bytes went.
    struct rest {
        rest() {
            for (auto &f : frames)
                f.init();
        }
        msg_t frames[max_frames];
        const std::uint8_t *headers[max_frames] = {};
        std::size_t header_sizes[max_frames] = {};
        std::size_t count = 0;
        std::size_t written = 0;
    };

    // How a write of some bytes is cut: the first sendmsg takes at most first
    // bytes, each later one at most cap (0: no limit).
    struct cut {
        std::size_t first = 0;
        std::size_t cap = 0;
    };
    // The engine's rule for a lone batch of the given bytes; A calls it while it
    // holds the connection (I is idle then, so the rule's state is A's alone).
    using cut_rule = std::function<cut(std::size_t bytes)>;

    // I (the engine, once its handshake is done): A may write to fd from now on,
    // once I says it is idle; wake_io asks I, from A's thread, to run its output;
    // cut_by cuts A's writes (empty: one sendmsg for the whole message).
    void attach(const void *owner, int fd, std::function<void()> wake_io, cut_rule cut_by = {});
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
    void drop_rest() noexcept;

    std::mutex mutex_;
    std::atomic<bool> open_{false};  // also read without the mutex, as a hint
    bool idle_ = false;
    int fd_ = -1;
    const void *owner_ = nullptr;
    std::function<void()> wake_io_;
    cut_rule cut_by_;
    gather_list gather_;  // A's write in progress (kept: no allocation once warm)
    // The message left half written (rest_count_ > 0), and its frames' headers.
    msg_t rest_[max_frames];
    std::size_t rest_count_ = 0;
    std::size_t rest_written_ = 0;
    std::uint8_t headers_[max_frames][wire::max_header_size] = {};
    std::size_t header_sizes_[max_frames] = {};
    std::atomic<std::uint64_t> sent_{0};
};

}  // namespace zlink
