// mailbox: the command queue of a socket, signalled through an eventfd.
//
// Why an eventfd: ZMQ_FD and zmq_poll need a real file descriptor that
// becomes readable when the socket has commands to process (libzmq's
// edge-triggered contract).
//
// Signalling follows libzmq's mailbox/ypipe idea (own implementation): the
// reader goes to sleep only when it found the queue empty, and the first
// poster after that writes the eventfd exactly once; the reader consumes that
// one signal when it wakes.  So the eventfd is readable exactly while a
// sleeping reader is owed a wake-up, every wake-up costs one write and one
// read, and no lock is ever held across a system call (a poster that holds a
// lock while its write() wakes the reader makes the reader block on that lock
// at once: a futex round trip and two context switches per message, which is
// what the earlier design measured at 256 KiB).  The atomic `pending_` lets
// the hot path see "nothing to do" without a lock or a system call.
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
    // Runs queued commands until the queue is empty (then the reader sleeps:
    // the next post signals the fd).  Returns how many ran.  Cheap when empty.
    enum class on_failure { retry, drop };  // what happens to a command that threw
    int process(on_failure failed = on_failure::retry);
    // Blocks until a command is queued or timeout_ms passes (-1 = forever).
    // Returns 1 when signalled, 0 on timeout, -1 with errno EINTR when a
    // signal interrupted the wait (zmq_send/zmq_recv then fail with EINTR).
    int wait(int timeout_ms);
    int fd() const { return fd_; }
    // True when process() would find something to run: one atomic load, no lock.
    bool has_work() const { return active_ || pending_.load(std::memory_order_acquire); }

private:
    bool go_to_sleep();     // true when the queue was empty (reader now asleep)
    bool sleep_if_empty();  // go_to_sleep() with mutex_ held
    bool consume_signal(int timeout_ms);
    void requeue_from(size_t first);

    int fd_;
    std::mutex mutex_;
    std::vector<command> queue_;  // under mutex_
    // The reader starts asleep (as libzmq's): a user who polls ZMQ_FD before
    // ever calling ZMQ_EVENTS is still woken by the first command.
    bool asleep_ = true;                // under mutex_: reader wants a signal
    std::vector<command> running_;      // reader only
    bool active_ = false;               // reader only: not asleep
    bool in_process_ = false;           // reader only
    std::atomic<bool> pending_{false};  // commands queued (set by posters)
    std::atomic<int> posters_{0};       // threads inside post(); see ~mailbox()
};

}  // namespace zlink
