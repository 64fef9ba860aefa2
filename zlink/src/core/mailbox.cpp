#include "core/mailbox.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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
// poster is still inside signal().  Destruction waits until no poster is inside.
mailbox::~mailbox() {
    while (posters_.load(std::memory_order_acquire) != 0)
        std::this_thread::yield();
    ::close(fd_);
}

void mailbox::post(command c) {
    posters_.fetch_add(1, std::memory_order_seq_cst);  // before the command is visible
    {
        std::lock_guard<std::mutex> lock(mutex_);
        queue_.push_back(std::move(c));
        pending_.store(true, std::memory_order_seq_cst);
    }
    signal();  // outside the lock: the reader never waits behind a syscall
    posters_.fetch_sub(1, std::memory_order_release);  // last touch of *this
}

// Sets the eventfd once per batch.  signalled_ mirrors the eventfd state
// exactly, because both change together under signal_mutex_ (taken only on
// the not-signalled -> signalled transition and by the reader), so the fd is
// never left readable with signalled_ false (pollers would spin).
void mailbox::signal() {
    if (signalled_.load(std::memory_order_seq_cst))
        return;  // already set; a concurrent unsignal() re-checks pending_
    std::lock_guard<std::mutex> lock(signal_mutex_);
    if (signalled_.load(std::memory_order_relaxed))
        return;
    uint64_t one = 1;
    ssize_t rc;
    do
        rc = ::write(fd_, &one, sizeof one);
    while (rc < 0 && errno == EINTR);
    signalled_.store(true, std::memory_order_seq_cst);
}

// Clears the eventfd, then re-sets it if a command slipped in meanwhile, so
// the fd is readable exactly when commands are queued.
void mailbox::unsignal() {
    {
        std::lock_guard<std::mutex> lock(signal_mutex_);
        uint64_t v;
        while (::read(fd_, &v, sizeof v) < 0 && errno == EINTR) {
        }
        signalled_.store(false, std::memory_order_seq_cst);
    }
    if (pending_.load(std::memory_order_seq_cst))
        signal();
}

// A command that throws (an allocation failing inside it) ends this call with
// that exception (the C boundary turns it into ENOMEM).  The command stays
// first in line and runs again on the next call, followed by the rest: under
// memory pressure a pipe attach or activation is delayed, never lost.
int mailbox::process() {
    // A command may call back into the socket; never re-enter the batch.
    if (in_process_)
        return 0;
    if (next_ == running_.size()) {
        if (!pending_.load(std::memory_order_acquire)) {
            if (signalled_.load(std::memory_order_acquire))
                unsignal();  // a late signal for an already processed command
            return 0;
        }
        running_.clear();
        next_ = 0;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            running_.swap(queue_);
            pending_.store(false, std::memory_order_release);
        }
        unsignal();
    }
    in_process_ = true;
    struct leave_batch {
        bool &flag;
        ~leave_batch() { flag = false; }
    } leave{in_process_};
    int n = 0;
    while (next_ < running_.size()) {
        dispatch(running_[next_]);
        ++next_;
        ++n;
    }
    return n;
}

int mailbox::wait(int timeout_ms) {
    if (pending())
        return 1;
    pollfd p{fd_, POLLIN, 0};
    int rc = ::poll(&p, 1, timeout_ms);
    return rc > 0 ? 1 : rc;  // poll sets errno (EINTR) on -1
}

}  // namespace zlink
