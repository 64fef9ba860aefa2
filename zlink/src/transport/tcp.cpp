// The tcp stream family: IPv4/IPv6 addresses, host names, "*" wildcards.
#include <netinet/in.h>
#include <sys/socket.h>

#include <asio/ip/address.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include "transport/address.hpp"
#include "transport/socket_tuning.hpp"
#include "transport/stream_family.hpp"
#include "transport/write_cap.hpp"
#include "zlink.h"

namespace zlink {

namespace {

// host and port in numbers (an IPv4 address, or IPv6 when allowed): the
// endpoint as getaddrinfo would give it; otherwise nothing (a name to resolve).
// The port is checked here, not taken as checked: a SOCKS proxy's address
// (ZMQ_SOCKS_PROXY) reaches resolve() without zmq_connect's check, and a
// service name there must still go to the resolver.
std::optional<asio::generic::stream_protocol::endpoint>
numeric_endpoint(const std::string &host, const std::string &port, bool ipv6) {
    asio::error_code ec;
    const asio::ip::address addr = asio::ip::make_address(host, ec);
    if (ec || (addr.is_v6() && !ipv6) || port.empty() || port.size() > 5)
        return std::nullopt;
    unsigned long n = 0;
    for (char c : port) {
        if (!std::isdigit(static_cast<unsigned char>(c)))
            return std::nullopt;
        n = n * 10 + static_cast<unsigned long>(c - '0');
    }
    if (n > 65535)
        return std::nullopt;
    return asio::generic::stream_protocol::endpoint(
        asio::ip::tcp::endpoint(addr, static_cast<unsigned short>(n)));
}

// zmq_connect refuses at once what cannot be a host (or source;host) and a
// numeric port, as libzmq 4.3.5 does before it defers resolution: a name with
// spaces would otherwise be retried in the background for ever.
bool plausible_connect_text(const std::string &address) {
    for (char c : address) {
        const bool ok = std::isalnum(static_cast<unsigned char>(c)) || std::strchr(".-:%;[]_*", c);
        if (!ok || c == '\0')
            return false;
    }
    return !address.empty();
}

// What follows the source part of "source;destination" (the whole text without one).
std::string destination_part(const std::string &address) {
    const auto semi = address.find(';');
    return semi == std::string::npos ? address : address.substr(semi + 1);
}

using range_t = knob_desc::range_t;
const knob_desc tcp_knobs[] = {
    {ZMQ_ASIO_IN_BATCH_SIZE_TCP, "ZMQ_ASIO_IN_BATCH_SIZE_TCP", range_t::batch},
    {ZMQ_ASIO_OUT_BATCH_SIZE_TCP, "ZMQ_ASIO_OUT_BATCH_SIZE_TCP", range_t::batch},
    {ZMQ_ASIO_TCP_MAX_TRANSFER, "ZMQ_ASIO_TCP_MAX_TRANSFER", range_t::transfer},
};

class tcp_family_t final : public stream_family {
public:
    std::span<const knob_desc> knobs() const override { return tcp_knobs; }
    void resolve_batch(const knobs_t &k, options_t::batch_options &b) const override {
        resolve_batch_sizes(k, ZMQ_ASIO_IN_BATCH_SIZE_TCP, ZMQ_ASIO_OUT_BATCH_SIZE_TCP, b);
        b.max_transfer = k.value(ZMQ_ASIO_TCP_MAX_TRANSFER);
        // tcp only (transport/write_cap.hpp says why); under ZMQ_ASIO_TCP_MAX_TRANSFER
        // the first write takes the smaller of the two.
        b.first_write = static_cast<int>(first_write_bytes);
        b.pause_for_peer = true;    // on loopback only (transport/peer_pause.hpp)
        b.split_when_paced = true;  // on loopback only (transport/paced_split.hpp)
        // Cut as the IO thread cuts its writes (core/direct_send.hpp); only at SNDHWM 0:
        // at a bounded HWM a sender to a peer that stopped reading would fill the
        // kernel's buffers (megabytes on loopback) before the HWM said EAGAIN
        // (libzmq's test_router_mandatory_hwm: 69 messages of 64 KiB, not < 10).
        b.direct_send = true;
        b.direct_send_unlimited_hwm_only = true;
    }
    bool dials_through_socks() const override { return true; }

    int bind_endpoint(const std::string &address, const options_t &opts, endpoint_type &out,
                      bound_files &) const override {
        asio::ip::tcp::endpoint tep;
        if (tcp_bind_endpoint(address, opts.ipv6, tep) != 0)
            return -1;
        out = endpoint_type(tep);
        return 0;
    }

    void prepare_acceptor(acceptor_type &acceptor, const endpoint_type &ep,
                          const options_t &opts) const override {
        asio::error_code ignore;
        acceptor.set_option(asio::socket_base::reuse_address(true), ignore);
        prepare_tcp_socket(acceptor.native_handle(), opts);
        if (opts.ipv6 && ep.protocol().family() == AF_INET6) {
            int zero = 0;  // dual stack: accept IPv4 too
            ::setsockopt(acceptor.native_handle(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        }
    }

    std::string bound_text(const acceptor_type &acceptor, const bound_files &) const override {
        asio::error_code ec;
        auto local = acceptor.local_endpoint(ec);
        asio::ip::tcp::endpoint tep;
        std::memcpy(tep.data(), local.data(), local.size());
        tep.resize(local.size());
        return tcp_endpoint_text(tep);
    }

    void remove_files(const bound_files &) const override {}

    int check_connect_address(const std::string &address) const override {
        std::string host, port;
        const auto semi = address.find(';');
        if (semi != std::string::npos && split_host_port(address.substr(0, semi), host, port) != 0)
            return -1;
        if (!plausible_connect_text(address) ||
            split_host_port(destination_part(address), host, port) != 0 || port.empty() ||
            !std::isdigit(static_cast<unsigned char>(port[0]))) {
            errno = EINVAL;
            return -1;
        }
        return 0;
    }

    void resolve(asio::io_context &ioc, const std::string &address, const options_t &opts,
                 resolve_handler done) const override {
        std::string host, port;
        split_host_port(destination_part(address), host, port);  // checked at zmq_connect
        // An address in numbers needs no resolver: Asio's runs getaddrinfo on a thread
        // of its own (started at the first resolve) and hands the result back, two
        // hand-overs between threads that each wait for a CPU on a loaded host. The
        // result still arrives through the io_context, as a resolved name's does.
        if (auto ep = numeric_endpoint(host, port, opts.ipv6)) {
            asio::post(ioc, [ep = *ep, done = std::move(done)] { done({}, ep); });
            return;
        }
        auto resolver = std::make_shared<asio::ip::tcp::resolver>(ioc);
        const bool ipv6 = opts.ipv6;
        resolver->async_resolve(
            host, port,
            [resolver, ipv6, done = std::move(done)](
                const asio::error_code &ec, asio::ip::tcp::resolver::results_type results) {
                if (ec)
                    return done(ec, endpoint_type());
                for (const auto &r : results)
                    if (ipv6 || r.endpoint().address().is_v4())
                        return done(ec, endpoint_type(r.endpoint()));
                done(asio::error::host_not_found, endpoint_type());
            });
    }

    void tune(int fd, const options_t &opts) const override {
        apply_tcp_options(fd, opts);
        apply_buffer_sizes(fd, opts);
    }

    void prepare_connect(int fd, const options_t &opts) const override {
        prepare_tcp_socket(fd, opts);
    }

    // "tcp://source;destination": the connection leaves from source (a port of
    // 0 or "*" lets the kernel pick). SO_REUSEADDR first, as libzmq does, so
    // one source port can reach several servers and be reused at once.
    int bind_source(int fd, const std::string &address, const options_t &opts) const override {
        const auto semi = address.find(';');
        if (semi == std::string::npos)
            return 0;
        asio::ip::tcp::endpoint src;
        if (tcp_bind_endpoint(address.substr(0, semi), opts.ipv6, src) != 0)
            return -1;
        int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        return ::bind(fd, src.data(), static_cast<socklen_t>(src.size()));
    }
};

}  // namespace

const stream_family &tcp_family() {
    static const tcp_family_t family;
    return family;
}

}  // namespace zlink
