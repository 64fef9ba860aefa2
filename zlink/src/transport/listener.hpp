// listener_t: a bound tcp/ipc endpoint accepting connections.  Each accepted
// connection becomes a bind-side session on the least loaded IO thread; the
// socket owns it (an `own` command) from then on.
//
// Hooks for the api piece: ZMQ_TCP_ACCEPT_FILTER is checked in on_accept()
// before a session is made; "unbind closes the accepted connections" needs
// the listener to remember its sessions and stop them in stop().
#pragma once
#include <asio/generic/stream_protocol.hpp>
#include <memory>
#include <string>

#include "core/io_object.hpp"
#include "core/options.hpp"
#include "transport/stream_family.hpp"

namespace zlink {

class listener_t final : public io_object {
public:
    listener_t(io_thread *thread, socket_base_t *owner, const options_t &opts,
               const stream_family &family, std::string address);
    // Binds and listens, on the caller's (socket's) thread, before start():
    // errors go to zmq_bind.  0, or -1 with errno.
    int open(std::string &resolved);
    void start() override;
    void stop() override;

private:
    void accept_next();
    void on_accept(io_thread *target, asio::generic::stream_protocol::socket sock);

    options_t opts_;
    const stream_family &family_;
    std::string address_;
    stream_family::acceptor_type acceptor_;
    stream_family::bound_files files_;
};

}  // namespace zlink
