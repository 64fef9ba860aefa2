// listener_t: a bound tcp/ipc endpoint accepting connections.  Each accepted
// connection becomes a bind-side session on the least loaded IO thread; the
// socket owns it (an `own` command) from then on.
//
// As libzmq: ZMQ_TCP_ACCEPT_FILTER / ZMQ_IPC_FILTER_* are checked in
// on_accept() before a session is made (accept_filter.hpp); zmq_unbind also
// closes the connections this listener accepted (it remembers their
// sessions); ZMQ_USE_FD makes open() adopt the application's listening
// socket instead of binding one (nothing is unlinked for ipc then).
#pragma once
#include <asio/generic/stream_protocol.hpp>
#include <memory>
#include <string>
#include <vector>

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
    int adopt_fd(std::string &resolved);
    void forget_finished_sessions();
    void accept_next();
    void on_accept(io_thread *target, asio::generic::stream_protocol::socket sock);

    options_t opts_;
    const stream_family &family_;
    std::string address_;
    stream_family::acceptor_type acceptor_;
    stream_family::bound_files files_;
    std::vector<std::weak_ptr<io_object>> sessions_;  // accepted here, stopped at unbind
    size_t prune_at_ = 16;
};

}  // namespace zlink
