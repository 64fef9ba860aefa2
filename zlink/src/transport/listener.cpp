// listener_t: a bound tcp/ipc endpoint accepting connections; each accepted
// connection becomes a session on the least loaded IO thread.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <asio/generic/stream_protocol.hpp>
#include <asio/socket_base.hpp>
#include <cstring>
#include <cerrno>

#include "core/ctx.hpp"
#include "core/io_object.hpp"
#include "core/io_thread.hpp"
#include "core/socket_base.hpp"
#include "transport/address.hpp"
#include "transport/session.hpp"
#include "transport/transport.hpp"
#include "zmq.h"

namespace zlink {

namespace {

class listener_t final : public io_object {
public:
    using acceptor_type = asio::basic_socket_acceptor<asio::generic::stream_protocol>;

    listener_t(io_thread *t, socket_base_t *owner, const options_t &opts, const endpoint_t &ep)
        : io_object(t, owner), opts_(opts), ep_(ep), acceptor_(t->ioc()) {}

    // Runs on the caller's thread, before start(): errors go to zmq_bind.
    int open(std::string &resolved) {
        asio::error_code ec;
        asio::generic::stream_protocol::endpoint gep;
        if (ep_.protocol == "tcp") {
            asio::ip::tcp::endpoint tep;
            if (tcp_bind_endpoint(ep_.address, opts_.ipv6, tep) != 0)
                return -1;
            gep = asio::generic::stream_protocol::endpoint(tep);
        } else {
            std::string path = ep_.address;
            if (path == "*") {
                // Wildcard ipc: a fresh private directory holds the socket file.
                char tmpl[] = "/tmp/zlink-ipc-XXXXXX";
                if (!mkdtemp(tmpl)) {
                    errno = EADDRINUSE;
                    return -1;
                }
                tmpdir_ = tmpl;
                path = tmpdir_ + "/socket";
            }
            if (path[0] != '@') {
                ::unlink(path.c_str());  // libzmq replaces a stale socket file
                ipc_path_ = path;
            }
            gep = asio::generic::stream_protocol::endpoint(ipc_endpoint(path));
            resolved = "ipc://" + path;
        }
        acceptor_.open(gep.protocol(), ec);
        if (!ec && ep_.protocol == "tcp") {
            acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
            if (opts_.ipv6 && gep.protocol().family() == AF_INET6) {
                int zero = 0;  // dual stack: accept IPv4 too
                ::setsockopt(acceptor_.native_handle(), IPPROTO_IPV6, IPV6_V6ONLY, &zero,
                             sizeof zero);
            }
        }
        if (!ec)
            acceptor_.bind(gep, ec);
        if (!ec)
            acceptor_.listen(opts_.backlog > 0 ? opts_.backlog : 100, ec);
        if (ec) {
            // asio reports system errors with their errno values on Linux.
            errno = ec.category() == asio::system_category() ? ec.value() : EINVAL;
            owner()->event(ZMQ_EVENT_BIND_FAILED, errno, ep_.protocol + "://" + ep_.address);
            acceptor_.close(ec);
            return -1;
        }
        if (ep_.protocol == "tcp") {
            auto local = acceptor_.local_endpoint(ec);
            auto *sa = reinterpret_cast<const sockaddr *>(local.data());
            asio::ip::tcp::endpoint tep;
            std::memcpy(tep.data(), sa, local.size());
            tep.resize(local.size());
            resolved = tcp_endpoint_text(tep);
        }
        owner()->event(ZMQ_EVENT_LISTENING, static_cast<int>(acceptor_.native_handle()), resolved);
        return 0;
    }

    void start() override { accept_next(); }

    void stop() override {
        asio::error_code ec;
        acceptor_.close(ec);
        if (!ipc_path_.empty())
            ::unlink(ipc_path_.c_str());
        if (!tmpdir_.empty())
            ::rmdir(tmpdir_.c_str());
        owner()->event(ZMQ_EVENT_CLOSED, 0, endpoint);
        finished();
    }

private:
    void accept_next() {
        if (stopping_)
            return;
        io_thread *t = owner()->ctx()->choose_io_thread();
        auto self = std::static_pointer_cast<listener_t>(shared_from_this());
        acceptor_.async_accept(
            t->ioc(), [self, t](const asio::error_code &ec,
                                asio::generic::stream_protocol::socket sock) {
                if (ec == asio::error::operation_aborted || self->stopping_)
                    return;
                if (ec) {
                    self->owner()->event(ZMQ_EVENT_ACCEPT_FAILED, ec.value(), self->endpoint);
                    return self->accept_next();
                }
                socket_base_t *o = self->owner();
                o->event(ZMQ_EVENT_ACCEPTED, static_cast<int>(sock.native_handle()),
                         self->endpoint);
                auto s = std::make_shared<session_t>(t, o, self->opts_, self->ep_, false, nullptr);
                s->endpoint = self->endpoint;
                o->commands().post([o, s] { o->own(s); });
                auto holder = std::make_shared<asio::generic::stream_protocol::socket>(std::move(sock));
                t->post([s, holder] { s->accepted(std::move(*holder)); });
                self->accept_next();
            });
    }

    options_t opts_;
    endpoint_t ep_;
    acceptor_type acceptor_;
    std::string ipc_path_;
    std::string tmpdir_;
};

}  // namespace

std::shared_ptr<io_object> make_listener(socket_base_t *owner, io_thread *thread,
                                         const endpoint_t &ep, const options_t &opts,
                                         std::string &resolved) {
    if (ep.protocol == "ipc" && ep.address != "*" && check_ipc_address(ep.address) != 0)
        return nullptr;
    auto l = std::make_shared<listener_t>(thread, owner, opts, ep);
    if (l->open(resolved) != 0)
        return nullptr;  // never started: ~io_object gives up the ownership count
    return l;
}

std::shared_ptr<io_object> make_connecter(socket_base_t *owner, io_thread *thread,
                                          const endpoint_t &ep, const options_t &opts,
                                          pipe_t *pipe) {
    if (ep.protocol == "tcp") {
        std::string host, port;
        if (split_host_port(ep.address, host, port) != 0 || port == "*") {
            errno = EINVAL;
            return nullptr;
        }
    }
    if (ep.protocol == "ipc" && check_ipc_address(ep.address) != 0)
        return nullptr;  // checked here: the IO thread could only fail silently
    auto s = std::make_shared<session_t>(thread, owner, opts, ep, true, pipe);
    return s;
}

}  // namespace zlink
