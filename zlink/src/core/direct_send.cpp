#include "core/direct_send.hpp"

namespace zlink {

bool direct_send::try_send(msg_t *frames, std::size_t count) noexcept {
    if (count == 0 || count > max_frames || !open_.load(std::memory_order_relaxed))
        return false;
    // Never wait for I: when it holds the mutex it is claiming the connection.
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock() || !open_.load(std::memory_order_relaxed) || !idle_)
        return false;
    gather_.clear();
    std::size_t total = 0;
    for (std::size_t i = 0; i < count; ++i) {
        header_sizes_[i] =
            wire::write_frame_header(headers_[i], frames[i].size(), i + 1 < count, false);
        gather_.add(headers_[i], header_sizes_[i]);
        gather_.add(frames[i].data(), frames[i].size());
        total += header_sizes_[i] + frames[i].size();
    }
    const cut c = cut_by_ ? cut_by_(total) : cut{};
    std::size_t limit = c.first > 0 && (c.cap == 0 || c.first < c.cap) ? c.first : c.cap;
    std::size_t n = 0;
    while (!gather_.empty()) {
        std::error_code ec;
        const std::size_t wrote = gather_.write_to(fd_, limit, ec);
        if (wrote == 0)
            break;  // a full buffer or a failure: I finds out when it writes
        n += wrote;
        if (!gather_.empty() && (limit == 0 || wrote < limit))
            break;  // the kernel took less than asked: its buffer is full
        limit = c.cap;
    }
    if (n == 0)
        return false;  // nothing went: the pipe's way
    sent_.fetch_add(1, std::memory_order_relaxed);
    if (n == total) {
        for (std::size_t i = 0; i < count; ++i) {
            frames[i].close();
            frames[i].init();
        }
        return true;
    }
    for (std::size_t i = 0; i < count; ++i) {
        rest_[i] = frames[i];
        frames[i].init();
    }
    rest_count_ = count;
    rest_written_ = n;
    idle_ = false;  // I owns the connection until the rest is out
    auto wake = wake_io_;
    lock.unlock();
    wake();
    return true;
}

void direct_send::attach(const void *owner, int fd, std::function<void()> wake_io,
                         cut_rule cut_by) {
    std::lock_guard lock(mutex_);
    owner_ = owner;
    fd_ = fd;
    wake_io_ = std::move(wake_io);
    cut_by_ = std::move(cut_by);
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
    cut_by_ = nullptr;
    drop_rest();
}

void direct_send::drop_rest() noexcept {
    for (std::size_t i = 0; i < rest_count_; ++i) {
        rest_[i].close();
        rest_[i].init();
    }
    rest_count_ = 0;
    rest_written_ = 0;
}

bool direct_send::claim(rest &out) noexcept {
    std::lock_guard lock(mutex_);
    idle_ = false;
    if (rest_count_ == 0)
        return false;
    for (std::size_t i = 0; i < rest_count_; ++i) {
        out.frames[i] = rest_[i];
        rest_[i].init();
        out.headers[i] = headers_[i];
        out.header_sizes[i] = header_sizes_[i];
    }
    out.count = rest_count_;
    out.written = rest_written_;
    rest_count_ = 0;
    rest_written_ = 0;
    return true;
}

void direct_send::now_idle() noexcept {
    std::lock_guard lock(mutex_);
    idle_ = open_.load(std::memory_order_relaxed);
}

}  // namespace zlink
