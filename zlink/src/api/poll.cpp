// zmq_poll: sockets and plain file descriptors in one wait.
// A socket counts as ready from its ZMQ_EVENTS; we block on its mailbox
// eventfd, which fires whenever commands (new data, free space) arrive.
#include <poll.h>

#include <cerrno>
#include <chrono>
#include <vector>

#include "core/socket_base.hpp"
#include "zmq.h"

using zlink::socket_base_t;

extern "C" __attribute__((visibility("default"))) int zmq_poll(zmq_pollitem_t *items, int nitems,
                                                               long timeout) {
    using clock = std::chrono::steady_clock;
    if (nitems < 0 || (!items && nitems > 0)) {
        errno = EFAULT;
        return -1;
    }
    if (nitems == 0) {
        if (timeout == 0)
            return 0;
        if (timeout < 0) {
            errno = EFAULT;  // would block forever (libzmq's answer)
            return -1;
        }
        ::poll(nullptr, 0, static_cast<int>(timeout));
        return 0;
    }
    std::vector<pollfd> fds(static_cast<size_t>(nitems));
    for (int i = 0; i < nitems; ++i) {
        if (items[i].socket) {
            auto *s = static_cast<socket_base_t *>(items[i].socket);
            if (!s->check_tag()) {
                errno = ENOTSOCK;
                return -1;
            }
            fds[i] = {s->fd(), static_cast<short>(items[i].events ? POLLIN : 0), 0};
        } else {
            short ev = 0;
            if (items[i].events & ZMQ_POLLIN) ev |= POLLIN;
            if (items[i].events & ZMQ_POLLOUT) ev |= POLLOUT;
            if (items[i].events & ZMQ_POLLPRI) ev |= POLLPRI;
            fds[i] = {items[i].fd, ev, 0};
        }
    }
    const auto start = clock::now();
    bool first = true;
    for (;;) {
        int wait;
        if (first || timeout == 0)
            wait = 0;
        else if (timeout < 0)
            wait = -1;
        else {
            auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - start)
                             .count();
            wait = spent >= timeout ? 0 : static_cast<int>(timeout - spent);
        }
        int rc = ::poll(fds.data(), static_cast<nfds_t>(nitems), wait);
        if (rc < 0) {
            if (errno == EINTR)
                return -1;
            return -1;
        }
        int ready = 0;
        for (int i = 0; i < nitems; ++i) {
            items[i].revents = 0;
            if (items[i].socket) {
                int ev = static_cast<socket_base_t *>(items[i].socket)->poll_events();
                if (ev < 0)
                    return -1;  // ETERM
                items[i].revents = static_cast<short>(ev & items[i].events);
            } else {
                short r = fds[i].revents;
                if (r & POLLIN) items[i].revents |= ZMQ_POLLIN;
                if (r & POLLOUT) items[i].revents |= ZMQ_POLLOUT;
                if (r & POLLPRI) items[i].revents |= ZMQ_POLLPRI;
                if (r & ~(POLLIN | POLLOUT | POLLPRI)) items[i].revents |= ZMQ_POLLERR;
            }
            if (items[i].revents)
                ++ready;
        }
        if (ready > 0 || timeout == 0)
            return ready;
        if (!first && timeout > 0 &&
            std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - start).count() >=
                timeout)
            return 0;
        first = false;
    }
}
