#include "core/direct_send.hpp"

#include <sys/socket.h>
#include <sys/uio.h>

namespace zlink {

bool direct_send::try_send(msg_t &m) noexcept {
    if (!open_.load(std::memory_order_relaxed))
        return false;
    // Never wait for I: when it holds the mutex it is claiming the connection.
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock() || !open_.load(std::memory_order_relaxed) || !idle_)
        return false;
    header_size_ = wire::write_frame_header(header_, m.size(), false, false);
    iovec iov[2] = {{header_, header_size_}, {m.data(), m.size()}};
    msghdr h{};
    h.msg_iov = iov;
    h.msg_iovlen = 2;
    const ssize_t n = ::sendmsg(fd_, &h, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0)
        return false;  // a full buffer or a failure: the pipe's way, I sees the failure
    sent_.fetch_add(1, std::memory_order_relaxed);
    if (static_cast<std::size_t>(n) == header_size_ + m.size()) {
        m.close();
        m.init();
        return true;
    }
    rest_ = m;
    m.init();
    rest_written_ = static_cast<std::size_t>(n);
    idle_ = false;  // I owns the connection until the rest is out
    auto wake = wake_io_;
    lock.unlock();
    wake();
    return true;
}

void direct_send::attach(const void *owner, int fd, std::function<void()> wake_io) {
    std::lock_guard lock(mutex_);
    owner_ = owner;
    fd_ = fd;
    wake_io_ = std::move(wake_io);
    idle_ = false;  // until I finds nothing to send
    open_.store(true, std::memory_order_relaxed);
}

void direct_send::detach(const void *owner) noexcept {
    std::lock_guard lock(mutex_);
    if (owner != owner_)
        return;
    open_.store(false, std::memory_order_relaxed);
    owner_ = nullptr;
    fd_ = -1;
    idle_ = false;
    wake_io_ = nullptr;
    rest_.close();
    rest_.init();
    rest_written_ = 0;
}

bool direct_send::claim(rest &out) noexcept {
    std::lock_guard lock(mutex_);
    idle_ = false;
    if (rest_written_ == 0)
        return false;
    out.msg = rest_;
    rest_.init();
    out.header = header_;
    out.header_size = header_size_;
    out.written = rest_written_;
    rest_written_ = 0;
    return true;
}

void direct_send::now_idle() noexcept {
    std::lock_guard lock(mutex_);
    idle_ = open_.load(std::memory_order_relaxed);
}

}  // namespace zlink
