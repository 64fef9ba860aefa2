// mailbox: the command queue of a socket, signalled through an eventfd.
//
// Why an eventfd: ZMQ_FD and zmq_poll need a real file descriptor that
// becomes readable when the socket has commands to process (libzmq's
// edge-triggered contract).  The atomic `pending_` lets the hot path check
// for commands without a system call; the eventfd is written at most once
// until the reader clears it (one wake-up per batch of commands), and never
// while holding the queue lock, so posters and the reader do not convoy.
#pragma once
#include <atomic>
#include <mutex>
#include <vector>

#include "core/executor.hpp"

namespace zlink {

class mailbox final : public executor {
public:
    mailbox();
    ~mailbox() override;
    void post(command c) override;
    // Runs queued commands; returns how many ran.  Cheap when empty.
    int process();
    // Blocks until a command is queued or timeout_ms passes (-1 = forever).
    // Returns 1 when signalled, 0 on timeout, -1 with errno EINTR when a
    // signal interrupted the wait (zmq_send/zmq_recv then fail with EINTR).
    int wait(int timeout_ms);
    bool pending() const { return pending_.load(std::memory_order_acquire); }
    int fd() const { return fd_; }

private:
    void signal();
    void unsignal();
    int fd_;
    std::mutex mutex_;
    std::vector<command> queue_;
    std::vector<command> running_;
    size_t next_ = 0;  // next command of running_ to run (see process())
    std::atomic<bool> pending_{false};
    std::mutex signal_mutex_;
    std::atomic<bool> signalled_{false};
    std::atomic<int> posters_{0};  // threads inside post(); see ~mailbox()
    bool in_process_ = false;
};

}  // namespace zlink
