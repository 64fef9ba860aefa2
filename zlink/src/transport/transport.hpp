// The transport layer as the socket sees it: parse an endpoint, create a
// listener (bound before returning, so errors reach zmq_bind) or a connecting
// session.  Everything returned runs on the given IO thread.
#pragma once
#include <memory>
#include <string>

#include "core/options.hpp"

namespace zlink {

class io_object;
class io_thread;
class pipe_t;
class socket_base_t;

struct endpoint_t {
    std::string protocol;  // "tcp", "ipc", "inproc"
    std::string address;   // after "://"
};

// 0, or -1 with errno EINVAL (malformed) / EPROTONOSUPPORT (unknown protocol).
int parse_endpoint(const char *text, endpoint_t &out);

// tcp/ipc listener, already bound and listening.  `resolved` receives the
// ZMQ_LAST_ENDPOINT form (actual port for tcp "*", path for ipc).
// nullptr with errno (EADDRINUSE, EADDRNOTAVAIL, ENODEV, EINVAL...).
std::shared_ptr<io_object> make_listener(socket_base_t *owner, io_thread *thread,
                                         const endpoint_t &ep, const options_t &opts,
                                         std::string &resolved);

// tcp/ipc connecting session.  `pipe` (may be null) is the session's end of a
// pipe already attached to the socket; when null the session attaches a new
// pipe after each handshake.  nullptr with errno EINVAL for a bad address.
std::shared_ptr<io_object> make_connecter(socket_base_t *owner, io_thread *thread,
                                          const endpoint_t &ep, const options_t &opts,
                                          pipe_t *pipe);

}  // namespace zlink
