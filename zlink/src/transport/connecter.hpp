// connecter_t: the connect side's way to a connection: resolve the address,
// connect, and on failure try again after RECONNECT_IVL plus a random part
// below it, or, with RECONNECT_IVL_MAX set, after RECONNECT_IVL doubling up to
// RECONNECT_IVL_MAX (next_wait, as libzmq 4.3.5).  It hands each connected, tuned stream socket to
// its host (the session), which builds an engine around it.
//
// One attempt is in flight at a time.  The host calls cancel() before it
// goes away; completions after that do nothing (they hold the connecter, not
// the host).
//
// Monitor events as libzmq 4.3.5 gives them: CONNECT_DELAYED when the
// non-blocking connect() is in progress (so the connect is made here, not by
// async_connect, which hides that), CONNECT_RETRIED (value: the wait in ms)
// when a retry is scheduled, not when it starts.
//
// ZMQ_CONNECT_TIMEOUT: a timer beside the pending connect closes one that
// takes longer and reports it as a failure (ETIMEDOUT).
//
// ZMQ_SOCKS_PROXY (tcp only): the connection is made to the proxy instead,
// and the SOCKS5 handshake (socks_handshake) asks it for the destination
// before the host sees the socket; a refused or malformed exchange is a
// failed attempt like a refused connect.
#pragma once
#include <asio/generic/stream_protocol.hpp>
#include <asio/steady_timer.hpp>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "core/options.hpp"
#include "transport/stream_family.hpp"

namespace zlink {

class connecter_host {
public:
    using socket_type = asio::generic::stream_protocol::socket;
    virtual ~connecter_host() = default;
    virtual void connected(socket_type sock) = 0;                 // ZMQ_EVENT_CONNECTED
    virtual void connect_delayed(int error) = 0;                  // CONNECT_DELAYED (EINPROGRESS)
    virtual void connect_failed(const asio::error_code &ec) = 0;  // the host calls attempt_later()
    virtual void connect_retrying(int interval_ms) = 0;           // CONNECT_RETRIED
};

class connecter_t final : public std::enable_shared_from_this<connecter_t> {
public:
    connecter_t(asio::io_context &ioc, const stream_family &family, std::string address,
                const options_t &opts, connecter_host &host);
    // Resolve and connect now.
    void attempt();
    // Attempt again after the next wait (next_wait).
    void attempt_later();
    // A connection got through the handshake: the next failure waits RECONNECT_IVL again.
    void reset_backoff() { ivl_ = opts_.reconnect.ivl; }
    void cancel();

private:
    void on_resolved(const asio::error_code &ec, const stream_family::endpoint_type &ep);
    void start_connect(const stream_family::endpoint_type &ep);
    void on_writable(const asio::error_code &ec);
    void on_connected(const asio::error_code &ec);
    void start_connect_timer();
    int next_wait();
    void negotiate_socks();
    void on_socks_done(const asio::error_code &ec);
    void hand_over();
    // What to resolve and connect to: the proxy, or the address itself.
    const std::string &dial_address() const { return via_socks_ ? opts_.socks.proxy : address_; }

    asio::io_context &ioc_;
    const stream_family &family_;
    std::string address_;
    options_t opts_;
    connecter_host *host_;
    int ivl_;
    std::minstd_rand jitter_rng_;
    bool via_socks_;
    bool cancelled_ = false;
    std::optional<connecter_host::socket_type> sock_;
    asio::steady_timer retry_timer_;
    asio::steady_timer connect_timer_;
    bool connect_timed_out_ = false;
};

}  // namespace zlink
