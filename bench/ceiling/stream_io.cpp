#include "stream_io.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "../common/process.hpp"

namespace bench {

namespace {
constexpr const char *kNames[] = {"blocking", "poll", "coalesce", "handoff"};
}

const char *to_string(IoWait w) { return kNames[static_cast<unsigned>(w)]; }

bool io_wait_from_string(const std::string &text, IoWait &out) {
    for (unsigned i = 0; i < kIoWaits; ++i)
        if (text == kNames[i]) {
            out = static_cast<IoWait>(i);
            return true;
        }
    return false;
}

StreamIo::StreamIo(RawSocket &s, IoWait wait, int timeout_ms)
    : s_(s), wait_(wait), timeout_ms_(timeout_ms) {
    if (wait_ == IoWait::poll)
        ::fcntl(s_.fd(), F_SETFL, ::fcntl(s_.fd(), F_GETFL) | O_NONBLOCK);
}

void StreamIo::wait_for(short events) {
    pollfd pfd{s_.fd(), events, 0};
    const int n = ::poll(&pfd, 1, timeout_ms_);
    if (n == 0)
        exit_timeout("the probe's stream made no progress for --timeout-ms");
    if (n < 0 && errno != EINTR)
        exit_error(std::string("poll: ") + std::strerror(errno));
}

std::size_t StreamIo::read_some(void *data, std::size_t n) {
    if (wait_ == IoWait::blocking || wait_ == IoWait::handoff)
        return s_.read_some(data, n);
    if (wait_ == IoWait::coalesce) {
        const std::size_t r = s_.read_some(data, n);
        if (r > 0 && r < n / 2)
            ::usleep(kCoalesceMicros);
        return r;
    }
    for (;;) {
        const ssize_t r = ::recv(s_.fd(), data, n, 0);
        if (r >= 0)
            return static_cast<std::size_t>(r);
        if (errno != EAGAIN && errno != EINTR)
            exit_error(std::string("recv: ") + std::strerror(errno));
        wait_for(POLLIN);
    }
}

void StreamIo::write_all(const void *data, std::size_t n) {
    if (wait_ != IoWait::poll)
        return s_.write_all(data, n);
    const char *p = static_cast<const char *>(data);
    while (n > 0) {
        const ssize_t w = ::send(s_.fd(), p, n, MSG_NOSIGNAL);
        if (w > 0) {
            p += w;
            n -= static_cast<std::size_t>(w);
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EINTR)
            exit_error(std::string("send: ") + std::strerror(errno));
        wait_for(POLLOUT);
    }
}

}  // namespace bench
