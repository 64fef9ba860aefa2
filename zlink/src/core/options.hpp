// options_t: the per-socket options that the core and the transports read.
// Sessions receive a copy taken at bind/connect time (like libzmq), so IO
// threads never read a socket's live options.
//
// Every generic option of libzmq 4.3.5 is stored and validated here with
// libzmq's rules (range, exact value size), including those whose transport
// effect is applied elsewhere or not at all (see zlink/README.md, "Not
// supported").  Options zlink cannot honour are refused rather than stored
// and ignored: GSSAPI and VMCI (EINVAL, as a libzmq built without them).
// Socket types answer their own options first
// (socket_base_t::xsetsockopt); security options live in security_options.
//
// ctx_options_t: the context options of zmq_ctx_set/zmq_ctx_get, and the
// defaults they give new sockets (ZMQ_IPV6, ZMQ_BLOCKY -> linger).
#pragma once
#include <sys/types.h>

#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

struct sockaddr;

#include "core/security_options.hpp"

namespace zlink {

// One ZMQ_TCP_ACCEPT_FILTER entry: a numeric address and a prefix length.
struct tcp_address_mask {
    int family = 0;  // AF_INET or AF_INET6
    std::array<uint8_t, 16> address{};
    int prefix_bits = 0;
    // "addr" or "addr/bits" (numeric only, as libzmq: no DNS, no NIC names).
    // 0, or -1 with EINVAL.  With ipv6, IPv4 text becomes a v4-mapped address.
    static int parse(std::string_view text, bool ipv6, tcp_address_mask &out);
    bool matches(const sockaddr *peer) const;
};

struct options_t {
    int type = -1;
    int sndhwm = 1000;
    int rcvhwm = 1000;
    int linger = -1;  // ms; -1 = forever (libzmq 4.3.5 default)
    std::string routing_id;
    std::string connect_routing_id;  // consumed by the next connect()
    int reconnect_ivl = 100;
    int reconnect_ivl_max = 0;
    int backlog = 100;
    int64_t maxmsgsize = -1;
    int sndbuf = -1;
    int rcvbuf = -1;
    int sndtimeo = -1;
    int rcvtimeo = -1;
    bool immediate = false;
    bool ipv6 = false;
    int tcp_keepalive = -1;
    int tcp_keepalive_cnt = -1;
    int tcp_keepalive_idle = -1;
    int tcp_keepalive_intvl = -1;
    int heartbeat_ivl = 0;
    int heartbeat_ttl = 0;       // ms, a multiple of 100 (the wire carries deciseconds)
    int heartbeat_timeout = -1;  // -1: use heartbeat_ivl
    int handshake_ivl = 30000;
    int connect_timeout = 0;
    bool invert_matching = false;  // PUB/XPUB send to, SUB delivers, the non-matching
    bool conflate = false;         // ZMQ_CONFLATE; see conflate_out()/conflate_in()
    int tos = 0;        // IP_TOS of tcp connections
    int tcp_maxrt = 0;  // TCP_USER_TIMEOUT, ms
    int use_fd = -1;    // a pre-made listening fd for the next bind
    std::string bound_device;  // SO_BINDTODEVICE
    // tcp connects go through this SOCKS5 proxy ("[source;]host:port") when
    // set; username/password (libzmq's draft options, in zlink.h) select
    // RFC 1929 authentication when the username is not empty.
    std::string socks_proxy;
    std::string socks_username;
    std::string socks_password;
    std::vector<tcp_address_mask> tcp_accept_filters;
    std::set<uid_t> ipc_uid_filters;
    std::set<gid_t> ipc_gid_filters;
    std::set<pid_t> ipc_pid_filters;
    // Stored for libzmq compatibility; they only matter to transports zlink
    // does not have (pgm, epgm, norm) or to IO-thread choice.
    uint64_t affinity = 0;
    int rate = 100;
    int recovery_ivl = 10000;
    int multicast_hops = 1;
    int multicast_maxtpdu = 1500;
    bool multicast_loop = true;       // ZMQ_MULTICAST_LOOP (udp/pgm only in libzmq)
    bool loopback_fastpath = false;   // ZMQ_LOOPBACK_FASTPATH (Windows only in libzmq)
    // Set by socket types, not by users:
    bool recv_routing_id = false;  // ROUTER/STREAM: one pipe per connection, attached after handshake
    bool raw_socket = false;       // STREAM: no ZMTP, bytes only
    bool raw_notify = true;        // STREAM_NOTIFY: empty frame on (dis)connect
    bool probe_router = false;     // PROBE_ROUTER (DEALER/REQ/ROUTER): empty message to each new peer
    // Resolved per endpoint from the context knobs (bytes).
    int in_batch = 8192;          // where a connection's batches start
    int out_batch = 8192;
    int in_batch_ceiling = 65536;  // how far they may grow (= the start: static)
    int out_batch_ceiling = 65536;
    int max_transfer = 0;
    int first_write = 0;  // a batch's first sendmsg cap, 0: none (transport/write_cap.hpp)
    std::string last_endpoint;
    security_options security;  // ZMQ_MECHANISM, PLAIN, CURVE, ZAP options

    // Generic options; returns 0, or -1 with errno (EINVAL for an unknown
    // option or a bad value, ENOTSUP for one zlink cannot honour).
    int set(int option, const void *val, size_t len);
    // ZMQ_CONFLATE takes effect on DEALER, PULL, PUSH, PUB and SUB only (as
    // libzmq 4.3.5): new pipes keep only the newest message in the direction
    // data flows (out: PUSH, PUB, DEALER; in: PULL, SUB, DEALER). Unlike
    // libzmq, the subscription direction of PUB/SUB is never conflated, so
    // no subscription is lost to a newer one.
    bool conflate_out() const;
    bool conflate_in() const;
    int get(int option, void *val, size_t *len) const;

private:
    int set_string(int option, const void *val, size_t len);
    int set_filter(int option, const void *val, size_t len);
};

struct ctx_options_t {
    int io_threads = 1;
    int max_sockets = 1023;
    int max_msgsz = INT_MAX;
    bool ipv6 = false;      // default ZMQ_IPV6 of new sockets
    bool blocky = true;     // false: new sockets default to ZMQ_LINGER 0
    bool zero_copy_recv = true;
    int thread_priority = -1;      // -1: leave the IO threads' default
    int thread_sched_policy = -1;  // -1: leave the default
    std::set<int> thread_affinity_cpus;  // empty: no pinning
    std::string thread_name_prefix;

    // 0, or -1 with EINVAL (unknown option, bad value).
    int set(int option, int value);
    // The value, or -1 with EINVAL (unknown option).
    int get(int option) const;
    // The defaults a new socket takes from its context.
    void apply_to(options_t &socket) const;
    // Scheduling policy, priority and CPU affinity for an IO thread (libzmq
    // applies the same options to its background threads).  Best effort:
    // what the system refuses (no permission) is left as it was.
    void apply_to_thread(unsigned long native_handle) const;
};

}  // namespace zlink
