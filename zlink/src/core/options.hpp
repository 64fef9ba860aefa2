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

#include "core/knobs.hpp"
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

// The members are grouped by the job that reads them, so that a reader of
// one transport or one socket type finds what concerns it in one place and
// the struct stays small enough to read (issue 30: ~25 fields at most).
// Each group is a plain aggregate; options_t is still copied whole per endpoint.
struct options_t {
    // How a connecter retries a lost or refused connection and how long one
    // attempt may take (ZMQ_RECONNECT_IVL, _IVL_MAX, ZMQ_CONNECT_TIMEOUT).
    struct reconnect_options {
        int ivl = 100;
        int ivl_max = 0;
        int connect_timeout = 0;
    };
    // Only listening sockets read these (ZMQ_BACKLOG, ZMQ_USE_FD).
    struct listen_options {
        int backlog = 100;
        int use_fd = -1;  // a pre-made listening fd for the next bind
    };
    // Kernel options applied to each connection's fd (transport/socket_tuning).
    struct kernel_options {
        int sndbuf = -1;
        int rcvbuf = -1;
        int tos = 0;               // IP_TOS of tcp connections
        int tcp_maxrt = 0;         // TCP_USER_TIMEOUT, ms
        std::string bound_device;  // SO_BINDTODEVICE
    };
    // TCP keepalive: four values that only mean something together
    // (ZMQ_TCP_KEEPALIVE*; -1 leaves the kernel's default).
    struct keepalive_options {
        int enable = -1;
        int cnt = -1;
        int idle = -1;
        int intvl = -1;
    };
    // When the engine gives up on a silent peer: during the handshake, and
    // afterwards by ZMTP PING/PONG.
    struct liveness_options {
        int handshake_ivl = 30000;
        int heartbeat_ivl = 0;
        int heartbeat_ttl = 0;       // ms, a multiple of 100 (the wire carries deciseconds)
        int heartbeat_timeout = -1;  // -1: use heartbeat_ivl
    };
    // How long zmq_send / zmq_recv block (ms, -1 forever).
    struct blocking_options {
        int sndtimeo = -1;
        int rcvtimeo = -1;
    };
    // tcp connects go through this SOCKS5 proxy ("[source;]host:port") when
    // set; username/password (libzmq's draft options, in zlink.h) select
    // RFC 1929 authentication when the username is not empty.
    struct socks_options {
        std::string proxy;
        std::string username;
        std::string password;
    };
    // Which peers a listener accepts (transport/accept_filter).
    struct peer_filters {
        std::vector<tcp_address_mask> tcp;
        std::set<uid_t> ipc_uid;
        std::set<gid_t> ipc_gid;
        std::set<pid_t> ipc_pid;
    };
    // Stored for libzmq compatibility (set/get answer them); they only matter
    // to transports zlink does not have (pgm, epgm, norm, udp), to Windows, or
    // to IO-thread choice. Nothing else reads them.
    struct compat_options {
        uint64_t affinity = 0;
        int rate = 100;
        int recovery_ivl = 10000;
        int multicast_hops = 1;
        int multicast_maxtpdu = 1500;
        bool multicast_loop = true;      // ZMQ_MULTICAST_LOOP (udp/pgm only in libzmq)
        bool loopback_fastpath = false;  // ZMQ_LOOPBACK_FASTPATH (Windows only in libzmq)
    };
    // Set by socket types, not by users: how sessions frame and route.
    struct role_options {
        bool recv_routing_id =
            false;  // ROUTER/STREAM: one pipe per connection, attached after handshake
        bool raw_socket = false;  // STREAM: no ZMTP, bytes only
        bool raw_notify = true;   // STREAM_NOTIFY: empty frame on (dis)connect
        bool probe_router =
            false;  // PROBE_ROUTER (DEALER/REQ/ROUTER): empty message to each new peer
    };
    // The engine's I/O sizes (bytes), resolved per endpoint from the context
    // knobs and the transport (transport/stream_transport); defaults from
    // knobs_t so they are written once.
    struct batch_options {
        int in = knobs_t::default_batch;  // where a connection's batches start
        int out = knobs_t::default_batch;
        int in_ceiling = knobs_t::adaptive_ceiling;  // how far they may grow (= the start: static)
        int out_ceiling = knobs_t::adaptive_ceiling;
        int max_transfer = 0;  // one write's cap, 0: none
        int first_write = 0;   // a batch's first sendmsg cap, 0: none (transport/write_cap.hpp)
        // tcp: a lone mid-size message to a loopback peer on other CPUs goes as
        // 8 KiB, a trip through epoll, then the rest (transport/peer_pause.hpp)
        bool pause_for_peer = false;
        // tcp: a lone batch a little over one segment goes short piece first where
        // the connection paces (loopback, BBR) (transport/paced_split.hpp)
        bool split_when_paced = false;
        // ipc: to a peer on other CPUs, the IO thread also waits for writability
        // once, so it wakes whenever the peer drains the socket (transport/drain_wake.hpp)
        bool drain_wake = false;
        // ipc, tcp: the application writes a large message to the connection itself when
        // the IO thread has nothing to write (core/direct_send.hpp)
        bool direct_send = false;
        // tcp: only where nothing is bounded by the HWM (SNDHWM 0): a direct write
        // bypasses the pipe's HWM, and tcp's kernel buffers hold megabytes
        bool direct_send_unlimited_hwm_only = false;
    };

    int type = -1;
    int sndhwm = 1000;
    int rcvhwm = 1000;
    int linger = -1;  // ms; -1 = forever (libzmq 4.3.5 default)
    std::string routing_id;
    std::string connect_routing_id;  // consumed by the next connect()
    int64_t maxmsgsize = -1;
    bool immediate = false;
    bool ipv6 = false;
    bool invert_matching = false;  // PUB/XPUB send to, SUB delivers, the non-matching
    bool conflate = false;         // ZMQ_CONFLATE; see conflate_out()/conflate_in()
    std::string last_endpoint;
    reconnect_options reconnect;
    listen_options listening;
    kernel_options kernel;
    keepalive_options keepalive;
    liveness_options liveness;
    blocking_options blocking;
    socks_options socks;
    peer_filters filters;
    compat_options compat;
    role_options role;
    batch_options batch;
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
    bool ipv6 = false;   // default ZMQ_IPV6 of new sockets
    bool blocky = true;  // false: new sockets default to ZMQ_LINGER 0
    bool zero_copy_recv = true;
    int thread_priority = -1;            // -1: leave the IO threads' default
    int thread_sched_policy = -1;        // -1: leave the default
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
