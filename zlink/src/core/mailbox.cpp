#include "core/mailbox.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace zlink {

mailbox::mailbox() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (fd_ < 0) {
        std::perror("zlink: eventfd");
        std::abort();
    }
}

mailbox::~mailbox() { ::close(fd_); }

void mailbox::post(std::function<void()> fn) {
    std::lock_guard<std::mutex> lock(mutex_);
    const bool signal = queue_.empty();
    queue_.push_back(std::move(fn));
    pending_.store(true, std::memory_order_release);
    // Signal under the lock: process() then never sees a queued command
    // without the eventfd set, nor an eventfd left set with nothing queued
    // (which would make pollers spin).  Only on empty -> non-empty.
    if (signal) {
        uint64_t one = 1;
        ssize_t rc;
        do
            rc = ::write(fd_, &one, sizeof one);
        while (rc < 0 && errno == EINTR);
    }
}

int mailbox::process() {
    // A command may call back into the socket; never re-enter the batch.
    if (in_process_ || !pending_.load(std::memory_order_acquire))
        return 0;
    in_process_ = true;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        running_.swap(queue_);
        pending_.store(false, std::memory_order_relaxed);
        // Reset the eventfd while holding the lock, so a post racing with us
        // either lands in running_ or re-signals after this read.
        uint64_t v;
        while (::read(fd_, &v, sizeof v) < 0 && errno == EINTR) {
        }
    }
    int n = 0;
    for (auto &fn : running_) {
        fn();
        ++n;
    }
    running_.clear();
    in_process_ = false;
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
