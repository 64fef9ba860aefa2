// transport: what the core asks of a transport (tcp, ipc, inproc), and the
// table that maps an endpoint's scheme to one.
//
// The core declares this; transport/transports.cpp defines the table, so the
// core never includes transport/ and never compares scheme strings itself.
// Every operation runs on the socket's thread and returns 0, or -1 with errno:
//   bind        EADDRINUSE, EADDRNOTAVAIL, ENODEV, EINVAL (bad address),
//               EMTHREAD (no IO thread for a transport that needs one).
//               `resolved` receives the ZMQ_LAST_ENDPOINT text (real port for
//               tcp "*", generated path for ipc "*").
//   connect     EINVAL (bad address), EMTHREAD.  The connection itself is
//               made later, asynchronously; failures become monitor events.
//   unbind      ENOENT when nothing is bound under `text`.
//   disconnect  ENOENT when nothing is connected under `text`.
// A transport records what it creates with the socket (socket_base_t::
// add_endpoint / add_endpoint_pipe) so that unbind/disconnect and close can
// find it; socket_base_t::stop_endpoint undoes either.
#pragma once
#include <span>
#include <string>
#include <string_view>

#include "core/knobs.hpp"

namespace zlink {

class socket_base_t;

struct endpoint_t {
    std::string scheme;   // "tcp", "ipc", "inproc"
    std::string address;  // after "://"
};

class transport {
public:
    virtual ~transport() = default;
    virtual int bind(socket_base_t &s, const endpoint_t &ep, const std::string &text,
                     std::string &resolved) const = 0;
    virtual int connect(socket_base_t &s, const endpoint_t &ep, const std::string &text) const = 0;
    virtual int unbind(socket_base_t &s, const endpoint_t &ep, const std::string &text) const = 0;
    virtual int disconnect(socket_base_t &s, const endpoint_t &ep,
                           const std::string &text) const = 0;
    // True for transports between sockets of one context (inproc): the only
    // kind a socket monitor may use.
    virtual bool in_process() const { return false; }
    // The ZMQ_ASIO_* knobs this transport reads (core/knobs.hpp): declared
    // here, by the transport, so that the core keeps no list of transports.
    virtual std::span<const knob_desc> knobs() const { return {}; }
};

// The transport for a scheme, or nullptr.  Defined by transport/transports.cpp.
const transport *find_transport(std::string_view scheme);

// Splits "scheme://address" and finds its transport.  0, or -1 with errno
// EINVAL (no "://", empty scheme or address) or EPROTONOSUPPORT (a scheme
// zlink has no transport for: pgm, epgm, tipc, vmci, udp, ws...).
int parse_endpoint(const char *text, endpoint_t &out, const transport *&tr);

}  // namespace zlink
