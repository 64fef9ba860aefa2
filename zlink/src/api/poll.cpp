// zmq_poll: sockets and plain file descriptors in one wait.
// A socket counts as ready from its ZMQ_EVENTS; we block on its mailbox
// eventfd, which fires whenever commands (new data, free space) arrive, then
// ask the socket again.  Up to ZMQ_POLLITEMS_DFLT items need no allocation.
#include <poll.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <memory>

#include "api/boundary.hpp"
#include "core/socket_base.hpp"
#include "zmq.h"

using zlink::socket_base_t;

namespace {

using poll_clock = std::chrono::steady_clock;

short to_poll_events(short zmq_events) {
    short ev = 0;
    if (zmq_events & ZMQ_POLLIN)
        ev |= POLLIN;
    if (zmq_events & ZMQ_POLLOUT)
        ev |= POLLOUT;
    if (zmq_events & ZMQ_POLLPRI)
        ev |= POLLPRI;
    return ev;
}

short to_zmq_events(short poll_revents) {
    short ev = 0;
    if (poll_revents & POLLIN)
        ev |= ZMQ_POLLIN;
    if (poll_revents & POLLOUT)
        ev |= ZMQ_POLLOUT;
    if (poll_revents & POLLPRI)
        ev |= ZMQ_POLLPRI;
    if (poll_revents & ~(POLLIN | POLLOUT | POLLPRI))
        ev |= ZMQ_POLLERR;
    return ev;
}

// One pollfd per item: a socket's mailbox fd, or the item's own fd.
int build_pollset(const zmq_pollitem_t *items, int n, pollfd *fds) {
    for (int i = 0; i < n; ++i) {
        if (!items[i].socket) {
            fds[i] = {items[i].fd, to_poll_events(items[i].events), 0};
            continue;
        }
        auto *s = static_cast<socket_base_t *>(items[i].socket);
        if (!socket_base_t::is_live(s)) {
            errno = ENOTSOCK;
            return -1;
        }
        fds[i] = {s->fd(), static_cast<short>(items[i].events ? POLLIN : 0), 0};
    }
    return 0;
}

// Fills every item's revents; the number of ready items, or -1 (ETERM).
int collect_revents(zmq_pollitem_t *items, int n, const pollfd *fds) {
    int ready = 0;
    for (int i = 0; i < n; ++i) {
        items[i].revents = 0;
        if (items[i].socket) {
            int ev = static_cast<socket_base_t *>(items[i].socket)->poll_events();
            if (ev < 0)
                return -1;
            items[i].revents = static_cast<short>(ev & items[i].events);
        } else {
            items[i].revents = to_zmq_events(fds[i].revents);
        }
        ready += items[i].revents ? 1 : 0;
    }
    return ready;
}

// The poll(2) timeout for the next round: the first round never blocks (a
// socket may already be ready without its fd being signalled).
int next_wait(long timeout, poll_clock::time_point start, bool first) {
    if (first || timeout == 0)
        return 0;
    if (timeout < 0)
        return -1;
    auto spent =
        std::chrono::duration_cast<std::chrono::milliseconds>(poll_clock::now() - start).count();
    return spent >= timeout ? 0 : static_cast<int>(timeout - spent);
}

int poll_items(zmq_pollitem_t *items, int n, long timeout, pollfd *fds) {
    if (build_pollset(items, n, fds) != 0)
        return -1;
    const auto start = poll_clock::now();
    for (bool first = true;; first = false) {
        const int wait = next_wait(timeout, start, first);
        if (::poll(fds, static_cast<nfds_t>(n), wait) < 0)
            return -1;  // EINTR and friends, as libzmq
        const int ready = collect_revents(items, n, fds);
        if (ready != 0 || timeout == 0)
            return ready;
        if (!first && wait == 0)
            return 0;  // the time is up
    }
}

}  // namespace

ZLINK_API int zmq_poll(zmq_pollitem_t *items, int nitems, long timeout) {
    if (nitems < 0) {
        errno = EINVAL;
        return -1;
    }
    if (nitems == 0) {
        if (timeout < 0) {
            errno = EFAULT;  // nothing could ever wake it: refuse instead of hanging
            return -1;
        }
        if (timeout > 0)
            ::poll(nullptr, 0, static_cast<int>(timeout));
        return 0;
    }
    if (!items) {
        errno = EFAULT;
        return -1;
    }
    return zlink::api::guarded(-1, [&] {
        std::array<pollfd, ZMQ_POLLITEMS_DFLT> on_stack;
        std::unique_ptr<pollfd[]> on_heap;
        pollfd *fds = on_stack.data();
        if (nitems > ZMQ_POLLITEMS_DFLT)
            fds = (on_heap = std::make_unique<pollfd[]>(static_cast<size_t>(nitems))).get();
        return poll_items(items, nitems, timeout, fds);
    });
}
