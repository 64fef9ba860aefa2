#include "transport/connecter.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <limits>
#include <new>
#include <random>
#include <system_error>
#include <utility>

#include "transport/socks_handshake.hpp"

namespace zlink {

connecter_t::connecter_t(asio::io_context &ioc, const stream_family &family, std::string address,
                         const options_t &opts, connecter_host &host)
    : ioc_(ioc), family_(family), address_(std::move(address)), opts_(opts), host_(&host),
      ivl_(opts.reconnect.ivl), jitter_rng_(std::random_device{}()),
      via_socks_(family.dials_through_socks() && !opts.socks.proxy.empty()), retry_timer_(ioc),
      connect_timer_(ioc) {}

// An attempt that throws (Asio creating its resolver's descriptors at the fd
// limit, an allocation failing) counts as a failed attempt: reported and
// retried after the reconnect interval instead of being lost.
void connecter_t::attempt() {
    if (cancelled_)
        return;
    try {
        family_.resolve(ioc_, dial_address(), opts_,
                        [self = shared_from_this()](const asio::error_code &ec,
                                                    const stream_family::endpoint_type &ep) {
                            self->on_resolved(ec, ep);
                        });
    } catch (const std::system_error &e) {
        host_->connect_failed(e.code());
    } catch (const std::bad_alloc &) {
        host_->connect_failed(asio::error::no_memory);
    }
}

void connecter_t::on_resolved(const asio::error_code &ec, const stream_family::endpoint_type &ep) {
    if (cancelled_)
        return;
    if (ec)
        return host_->connect_failed(ec);
    sock_.emplace(ioc_);
    asio::error_code open_ec;
    sock_->open(ep.protocol(), open_ec);  // opened here so options precede the SYN
    if (open_ec) {
        sock_.reset();
        return host_->connect_failed(open_ec);  // EMFILE: retried later
    }
    family_.prepare_connect(sock_->native_handle(), opts_);
    if (family_.bind_source(sock_->native_handle(), dial_address(), opts_) != 0) {
        const asio::error_code bind_ec(errno, asio::error::get_system_category());
        sock_.reset();
        return host_->connect_failed(bind_ec);  // e.g. source address in use: retried
    }
    start_connect(ep);
}

// connect() on the non-blocking socket: done at once (ipc usually), pending
// (tcp: EINPROGRESS; ipc with a full backlog: EAGAIN), or refused.
void connecter_t::start_connect(const stream_family::endpoint_type &ep) {
    asio::error_code ec;
    sock_->non_blocking(true, ec);
    if (ec)
        return on_connected(ec);
    int rc;
    do
        rc = ::connect(sock_->native_handle(), ep.data(), static_cast<socklen_t>(ep.size()));
    while (rc != 0 && errno == EINTR);
    if (rc == 0)
        return on_connected({});
    const int error = errno;
    if (error != EINPROGRESS && error != EAGAIN)
        return on_connected(asio::error_code(error, asio::error::get_system_category()));
    host_->connect_delayed(error);
    start_connect_timer();
    sock_->async_wait(
        asio::socket_base::wait_write,
        [self = shared_from_this()](const asio::error_code &ec2) { self->on_writable(ec2); });
}

// The pending connect finished: SO_ERROR says how.
void connecter_t::on_writable(const asio::error_code &ec) {
    if (cancelled_ || ec || !sock_)
        return on_connected(ec);
    int error = 0;
    socklen_t len = sizeof error;
    if (::getsockopt(sock_->native_handle(), SOL_SOCKET, SO_ERROR, &error, &len) != 0)
        error = errno;
    on_connected(error == 0 ? asio::error_code()
                            : asio::error_code(error, asio::error::get_system_category()));
}

// ZMQ_CONNECT_TIMEOUT: a connect still pending after that many ms is closed
// and counts as a failed attempt (ETIMEDOUT), retried after RECONNECT_IVL.
void connecter_t::start_connect_timer() {
    if (opts_.reconnect.connect_timeout <= 0)
        return;
    connect_timed_out_ = false;
    connect_timer_.expires_after(std::chrono::milliseconds(opts_.reconnect.connect_timeout));
    connect_timer_.async_wait([self = shared_from_this()](const asio::error_code &ec) {
        if (ec || self->cancelled_ || !self->sock_)
            return;
        self->connect_timed_out_ = true;
        asio::error_code ignore;
        self->sock_->close(ignore);  // on_connected sees operation_aborted
    });
}

void connecter_t::on_connected(const asio::error_code &ec) {
    if (cancelled_)
        return;
    connect_timer_.cancel();
    if (ec) {
        asio::error_code ignore;
        if (sock_)
            sock_->close(ignore);
        sock_.reset();
        return host_->connect_failed(connect_timed_out_ ? asio::error::timed_out : ec);
    }
    if (via_socks_)
        return negotiate_socks();
    hand_over();
}

void connecter_t::hand_over() {
    connecter_host::socket_type sock = std::move(*sock_);
    sock_.reset();
    asio::error_code ignore;
    sock.non_blocking(true, ignore);
    family_.tune(sock.native_handle(), opts_);
    host_->connected(std::move(sock));
}

// Connected to the proxy: ask it for the destination.  A failure closes this
// connection and is reported like a failed connect (retried after the
// back-off); the socket and its other endpoints are not affected.
void connecter_t::negotiate_socks() {
    socks_target target;
    target.username = opts_.socks.username;
    target.password = opts_.socks.password;
    if (!socks_target_of(address_, target))
        return on_socks_done(asio::error::invalid_argument);
    socks_handshake(*sock_, target, [self = shared_from_this()](const asio::error_code &ec) {
        self->on_socks_done(ec);
    });
}

void connecter_t::on_socks_done(const asio::error_code &ec) {
    if (cancelled_ || !sock_)
        return;
    if (!ec)
        return hand_over();
    asio::error_code ignore;
    sock_->close(ignore);
    sock_.reset();
    host_->connect_failed(ec);
}

// With RECONNECT_IVL_MAX set, the wait doubles from RECONNECT_IVL up to the
// maximum, as in libzmq 4.3.5 (no jitter there either). Without it (the
// default), every wait is RECONNECT_IVL plus a random part below RECONNECT_IVL,
// the rule of libzmq 4.3.5's stream_connecter_base_t: with a fixed wait, every
// client of a restarted server retries in lockstep, and a peer that comes back
// just after a retry (a restart that takes a multiple of the interval) is
// reached a whole interval late on every occasion. The random part comes from
// a generator seeded per connecter: libzmq's rand() is never seeded, so its
// processes all draw the same waits.
int connecter_t::next_wait() {
    const int wait = std::max(ivl_, 1);
    if (opts_.reconnect.ivl_max > opts_.reconnect.ivl) {
        ivl_ = static_cast<int>(std::min<long long>(2LL * ivl_, opts_.reconnect.ivl_max));
        return wait;
    }
    if (opts_.reconnect.ivl <= 0 || opts_.reconnect.ivl_max > 0)
        return wait;  // no interval to draw below, or a maximum set (libzmq: no jitter)
    std::uniform_int_distribution<int> jitter(0, opts_.reconnect.ivl - 1);
    return static_cast<int>(std::min<long long>(static_cast<long long>(wait) + jitter(jitter_rng_),
                                                std::numeric_limits<int>::max()));
}

void connecter_t::attempt_later() {
    if (cancelled_)
        return;
    const int wait = next_wait();
    retry_timer_.expires_after(std::chrono::milliseconds(wait));
    retry_timer_.async_wait([self = shared_from_this()](const asio::error_code &ec) {
        if (ec || self->cancelled_)
            return;
        self->attempt();
    });
    if (opts_.reconnect.ivl > 0)  // libzmq reports no retry for an interval of 0
        host_->connect_retrying(wait);
}

// The socket is closed, not destroyed: a SOCKS exchange in flight may be
// between two steps of a composed read or write that still names it; closed,
// that step fails (and on_socks_done ignores it) instead of touching freed memory.
void connecter_t::cancel() {
    cancelled_ = true;
    retry_timer_.cancel();
    connect_timer_.cancel();
    if (sock_) {
        asio::error_code ignore;
        sock_->close(ignore);
    }
}

}  // namespace zlink
