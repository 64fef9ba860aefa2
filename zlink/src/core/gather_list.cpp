#include "core/gather_list.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>

namespace zlink {

namespace {
constexpr std::size_t tail_allowance = 1024;
}  // namespace

void gather_list::add(const void *p, std::size_t n) {
    if (n > 0)
        iov_.push_back(iovec{const_cast<void *>(p), n});
}

std::size_t gather_list::pending_bytes() const noexcept {
    std::size_t total = 0;
    for (std::size_t i = first_; i < iov_.size(); ++i)
        total += iov_[i].iov_len;
    return total;
}

void gather_list::consume(std::size_t n) noexcept {
    while (n > 0 && first_ < iov_.size()) {
        iovec &e = iov_[first_];
        if (n < e.iov_len) {  // partial entry: the rest goes first next time
            e.iov_base = static_cast<char *>(e.iov_base) + n;
            e.iov_len -= n;
            return;
        }
        n -= e.iov_len;
        ++first_;
    }
}

std::size_t gather_list::write_to(int fd, std::size_t max_bytes, std::error_code &ec) {
    ec.clear();
    std::size_t count = std::min<std::size_t>(entry_count(), IOV_MAX);
    if (count == 0)
        return 0;
    iovec *first = iov_.data() + first_;
    // A cap that would leave only a short tail (the last bytes past a message
    // the size of the cap: its header, a routing id) lets the tail ride along.
    // A second sendmsg for a few bytes, and the peer's second wake-up for them,
    // cost more than the cap is for: PUBSUB tcp 256 KiB round trips took
    // 52-70 us with ZMQ_ASIO_TCP_MAX_TRANSFER=262144 against 47 us without
    // (2026-11-24).  Tail allowed: an eighth of the cap, at most 1 KiB.
    if (max_bytes > 0 &&
        pending_bytes() <= max_bytes + std::min<std::size_t>(max_bytes / 8, tail_allowance))
        max_bytes = 0;
    // The cap (ZMQ_ASIO_TCP_MAX_TRANSFER) may end inside an entry: shorten
    // that entry for this call only.
    std::size_t cut = count, kept_len = 0, sum = 0;
    if (max_bytes > 0) {
        for (std::size_t i = 0; i < count; ++i) {
            if (sum + first[i].iov_len >= max_bytes) {
                cut = i;
                kept_len = first[i].iov_len;
                first[i].iov_len = max_bytes - sum;
                count = i + 1;
                break;
            }
            sum += first[i].iov_len;
        }
    }
    msghdr mh{};
    mh.msg_iov = first;
    mh.msg_iovlen = count;
    ssize_t n;
    do
        n = ::sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    const int err = errno;
    if (cut < count)
        first[cut].iov_len = kept_len;
    if (n < 0) {
        ec = std::error_code(err == EWOULDBLOCK ? EAGAIN : err, std::system_category());
        return 0;
    }
    consume(static_cast<std::size_t>(n));
    return static_cast<std::size_t>(n);
}

}  // namespace zlink
