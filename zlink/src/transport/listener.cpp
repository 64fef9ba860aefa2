#include "transport/listener.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "core/ctx.hpp"
#include "core/io_thread.hpp"
#include "core/socket_base.hpp"
#include "transport/accept_filter.hpp"
#include "transport/session.hpp"
#include "zmq.h"

namespace zlink {

listener_t::listener_t(io_thread *thread, socket_base_t *owner, const options_t &opts,
                       const stream_family &family, std::string address)
    : io_object(thread, owner), opts_(opts), family_(family), address_(std::move(address)),
      acceptor_(thread->ioc()) {}

int listener_t::open(std::string &resolved) {
    if (opts_.listening.use_fd >= 0)
        return adopt_fd(resolved);
    stream_family::endpoint_type ep;
    if (family_.bind_endpoint(address_, opts_, ep, files_) != 0)
        return -1;
    asio::error_code ec;
    acceptor_.open(ep.protocol(), ec);
    if (!ec)
        family_.prepare_acceptor(acceptor_, ep, opts_);
    if (!ec)
        acceptor_.bind(ep, ec);
    if (!ec)
        acceptor_.listen(opts_.listening.backlog > 0 ? opts_.listening.backlog : 100, ec);
    if (ec) {
        // asio reports system errors with their errno values on Linux.
        errno = ec.category() == asio::system_category() ? ec.value() : EINVAL;
        const int e = errno;
        owner()->event(ZMQ_EVENT_BIND_FAILED, e, endpoint);
        acceptor_.close(ec);
        family_.remove_files(files_);  // ipc: the path's claim, a wildcard's directory
        errno = e;
        return -1;
    }
    files_.remember_socket_file();
    resolved = family_.bound_text(acceptor_, files_);
    owner()->event(ZMQ_EVENT_LISTENING, static_cast<int>(acceptor_.native_handle()), resolved);
    return 0;
}

// ZMQ_USE_FD: the application made (and bound) the listening socket; the
// address given to zmq_bind only names it.  Its family comes from the fd.
int listener_t::adopt_fd(std::string &resolved) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getsockname(opts_.listening.use_fd, reinterpret_cast<sockaddr *>(&ss), &len) != 0)
        return -1;  // EBADF, ENOTSOCK
    const int protocol = ss.ss_family == AF_UNIX ? 0 : IPPROTO_TCP;
    asio::error_code ec;
    acceptor_.assign(asio::generic::stream_protocol(ss.ss_family, protocol), opts_.listening.use_fd,
                     ec);
    if (!ec)
        acceptor_.listen(opts_.listening.backlog > 0 ? opts_.listening.backlog : 100, ec);
    if (ec) {
        errno = ec.value();
        return -1;
    }
    if (ss.ss_family == AF_UNIX)
        files_.text = "ipc://" + address_;  // and no file of ours to remove
    resolved = family_.bound_text(acceptor_, files_);
    owner()->event(ZMQ_EVENT_LISTENING, opts_.listening.use_fd, resolved);
    return 0;
}

void listener_t::start() { accept_next(); }

// Keeps sessions_ from growing with every connection ever accepted; pruned
// when it doubles, so the cost per accept stays constant.
void listener_t::forget_finished_sessions() {
    if (sessions_.size() < prune_at_)
        return;
    sessions_.erase(std::remove_if(sessions_.begin(), sessions_.end(),
                                   [](const std::weak_ptr<io_object> &w) { return w.expired(); }),
                    sessions_.end());
    prune_at_ = std::max<size_t>(16, 2 * sessions_.size());
}

void listener_t::stop() {
    asio::error_code ec;
    acceptor_.close(ec);
    family_.remove_files(files_);
    for (auto &weak : sessions_)  // zmq_unbind ends the accepted connections too
        if (auto session = weak.lock())
            session->request_stop(requested_linger_);
    sessions_.clear();
    owner()->event(ZMQ_EVENT_CLOSED, 0, endpoint);
    finished();
}

void listener_t::accept_next() {
    if (stopping_)
        return;
    // Accepted straight onto the IO thread that will run the connection.
    io_thread *t = owner()->ctx()->choose_io_thread();
    auto self = std::static_pointer_cast<listener_t>(shared_from_this());
    acceptor_.async_accept(t->ioc(), [self, t](const asio::error_code &ec,
                                               asio::generic::stream_protocol::socket sock) {
        if (ec == asio::error::operation_aborted || self->stopping_)
            return;
        if (ec)
            self->owner()->event(ZMQ_EVENT_ACCEPT_FAILED, ec.value(), self->endpoint);
        else
            self->on_accept(t, std::move(sock));
        self->accept_next();
    });
}

void listener_t::on_accept(io_thread *target, asio::generic::stream_protocol::socket sock) {
    if (!accept_filter_allows(sock.native_handle(), opts_)) {
        owner()->event(ZMQ_EVENT_ACCEPT_FAILED, EACCES, endpoint);
        return;  // closed with sock, before any ZMTP byte
    }
    owner()->event(ZMQ_EVENT_ACCEPTED, static_cast<int>(sock.native_handle()), endpoint);
    asio::error_code ignore;
    sock.non_blocking(true, ignore);
    family_.tune(sock.native_handle(), opts_);
    // The session is not shared with any thread yet: hand it the socket here,
    // then let the socket own it and the target thread start it.
    auto s = session_t::accepted(target, owner(), opts_, std::move(sock));
    s->endpoint = endpoint;
    forget_finished_sessions();
    sessions_.push_back(s);
    send_to_owner(command{command_kind::own, nullptr, nullptr, s});
    s->request_start();
}

}  // namespace zlink
