#include "core/mailbox.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <system_error>
#include <thread>

namespace zlink {

// Out of file descriptors (EMFILE, ENFILE) or memory: the socket cannot be
// made; zmq_socket's C boundary turns this into NULL + that errno.
mailbox::mailbox() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (fd_ < 0)
        throw std::system_error(errno, std::system_category(), "zlink: eventfd");
}

// A poster's command may be the one that lets the owner destroy this mailbox
// (a session's last "finished"), so the owner can run it and delete us while the
// poster is still inside post().  Destruction waits until no poster is inside.
mailbox::~mailbox() {
    while (posters_.load(std::memory_order_acquire) != 0)
        std::this_thread::yield();
    ::close(fd_);
}

void mailbox::post(command c) {
    posters_.fetch_add(1, std::memory_order_seq_cst);  // before the command is visible
    bool wake;
    {
        std::unique_lock<std::mutex> lock(mutex_);
        try {
            queue_.push_back(std::move(c));
        } catch (...) {  // out of memory: nothing queued, the poster gets the error
            lock.unlock();
            posters_.fetch_sub(1, std::memory_order_release);
            throw;
        }
        pending_.store(true, std::memory_order_release);
        wake = asleep_;
        asleep_ = false;
    }
    if (wake) {  // outside the lock: the reader never waits behind this syscall
        uint64_t one = 1;
        while (::write(fd_, &one, sizeof one) < 0 && errno == EINTR) {
        }
    }
    posters_.fetch_sub(1, std::memory_order_release);  // last touch of *this
}

// Takes the one signal a sleeping reader is owed.  A poster that queued a
// command after we slept writes it right after unlocking, so waiting for it
// is brief; timeout_ms 0 only checks.
bool mailbox::consume_signal(int timeout_ms) {
    for (;;) {
        uint64_t v;
        if (::read(fd_, &v, sizeof v) == sizeof v)
            return true;
        if (errno == EINTR)
            continue;
        if (timeout_ms == 0)
            return false;
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, timeout_ms) <= 0 && errno != EINTR)
            return false;
    }
}

bool mailbox::go_to_sleep() {
    std::lock_guard<std::mutex> lock(mutex_);
    return sleep_if_empty();
}

// Under mutex_.
bool mailbox::sleep_if_empty() {
    if (!queue_.empty())
        return false;
    pending_.store(false, std::memory_order_relaxed);
    asleep_ = true;
    active_ = false;
    return true;
}

// A command that throws (an allocation failing inside it) ends this call with
// that exception.  With on_failure::retry (a socket: the C boundary turns it
// into ENOMEM) the command stays first in line and runs again on the next
// call, followed by the rest: under memory pressure a pipe attach or
// activation is delayed, never lost.  With on_failure::drop (an IO thread,
// which reports and drops the failed operation) only the rest are kept.
int mailbox::process(on_failure failed) {
    // A command may call back into the socket; never re-enter the batch.
    if (in_process_)
        return 0;
    if (!active_) {
        if (!pending_.load(std::memory_order_acquire))
            return 0;  // asleep and nothing queued: the common, free case
        // Queued after we slept: the poster owes (or has written) the signal.
        if (!consume_signal(-1))
            return 0;
        active_ = true;
    }
    in_process_ = true;
    int n = 0;
    for (;;) {
        {
            // One lock per batch: taking the batch and, when there is none,
            // going to sleep (a second lock for that was ~1 per message at
            // 256 KiB, where every message is a batch of its own).
            std::lock_guard<std::mutex> lock(mutex_);
            if (sleep_if_empty())
                break;
            running_.swap(queue_);
        }
        size_t i = 0;
        try {
            for (; i < running_.size(); ++i, ++n)
                dispatch(running_[i]);
        } catch (...) {
            requeue_from(failed == on_failure::retry ? i : i + 1);
            in_process_ = false;
            throw;
        }
        running_.clear();
    }
    in_process_ = false;
    return n;
}

// A command threw: running_[first..] go back to the front of the queue, and
// we owe ourselves a signal, so the next process() - or an IO thread waiting
// on the fd - picks them up.
void mailbox::requeue_from(size_t first) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        queue_.insert(queue_.begin(), std::make_move_iterator(running_.begin() + first),
                      std::make_move_iterator(running_.end()));
        running_.clear();
        pending_.store(true, std::memory_order_release);
        asleep_ = false;
        active_ = false;
    }
    uint64_t one = 1;
    while (::write(fd_, &one, sizeof one) < 0 && errno == EINTR) {
    }
}

int mailbox::wait(int timeout_ms) {
    if (active_ && !go_to_sleep())
        return 1;  // commands are queued
    if (pending_.load(std::memory_order_acquire))
        return 1;  // queued since we slept: process() takes the signal
    pollfd p{fd_, POLLIN, 0};
    int rc = ::poll(&p, 1, timeout_ms);
    return rc > 0 ? 1 : rc;  // poll sets errno (EINTR) on -1
}

}  // namespace zlink
