#include "core/options.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "zlink.h"
#include "zmq.h"

namespace zlink {

namespace {

// Numbered in libzmq 4.3.5's draft header, yet accepted and answered by its
// stable builds (pyzmq's test_int_sockopts reads them). Any int, non-zero is
// on; stored with no effect on Linux tcp, ipc and inproc, as in libzmq
// (loopback fast path is Windows-only there, multicast loop is udp/pgm).
constexpr int option_loopback_fastpath = 94;  // ZMQ_LOOPBACK_FASTPATH
constexpr int option_multicast_loop = 96;     // ZMQ_MULTICAST_LOOP

// The option tables name a field by a function returning a reference to it:
// a pointer to member cannot reach into options_t's groups. get() passes a
// const_cast options_t and only reads through the reference.
template <typename T>
using field_ref = T &(*)(options_t &);

template <auto Field>
auto &top(options_t &o) {
    return o.*Field;
}

template <auto Group, auto Field>
auto &in(options_t &o) {
    return (o.*Group).*Field;
}

using O = options_t;

// libzmq's lenient booleans: any int, non-zero means on.
field_ref<bool> lenient_bool(int option) {
    switch (option) {
    case ZMQ_INVERT_MATCHING: return &top<&O::invert_matching>;  // read by PUB/SUB/XPUB/XSUB
    case option_loopback_fastpath: return &in<&O::compat, &O::compat_options::loopback_fastpath>;
    case option_multicast_loop: return &in<&O::compat, &O::compat_options::multicast_loop>;
    default: return nullptr;
    }
}

int fail(int e = EINVAL) {
    errno = e;
    return -1;
}

// ---- value checks shared by set and get (libzmq's rules) ----

// Integer options: the value must be exactly an int within [min, max].
struct int_option {
    int option;
    field_ref<int> field;
    int min;
    int max;
};

constexpr int_option int_options[] = {
    {ZMQ_SNDHWM, &top<&O::sndhwm>, 0, INT_MAX},
    {ZMQ_RCVHWM, &top<&O::rcvhwm>, 0, INT_MAX},
    {ZMQ_LINGER, &top<&O::linger>, -1, INT_MAX},
    {ZMQ_RECONNECT_IVL, &in<&O::reconnect, &O::reconnect_options::ivl>, -1, INT_MAX},
    {ZMQ_RECONNECT_IVL_MAX, &in<&O::reconnect, &O::reconnect_options::ivl_max>, 0, INT_MAX},
    {ZMQ_BACKLOG, &in<&O::listening, &O::listen_options::backlog>, 0, INT_MAX},
    {ZMQ_SNDBUF, &in<&O::kernel, &O::kernel_options::sndbuf>, -1, INT_MAX},
    {ZMQ_RCVBUF, &in<&O::kernel, &O::kernel_options::rcvbuf>, -1, INT_MAX},
    {ZMQ_SNDTIMEO, &in<&O::blocking, &O::blocking_options::sndtimeo>, -1, INT_MAX},
    {ZMQ_RCVTIMEO, &in<&O::blocking, &O::blocking_options::rcvtimeo>, -1, INT_MAX},
    {ZMQ_TCP_KEEPALIVE, &in<&O::keepalive, &O::keepalive_options::enable>, -1, 1},
    {ZMQ_TCP_KEEPALIVE_CNT, &in<&O::keepalive, &O::keepalive_options::cnt>, -1, INT_MAX},
    {ZMQ_TCP_KEEPALIVE_IDLE, &in<&O::keepalive, &O::keepalive_options::idle>, -1, INT_MAX},
    {ZMQ_TCP_KEEPALIVE_INTVL, &in<&O::keepalive, &O::keepalive_options::intvl>, -1, INT_MAX},
    {ZMQ_HEARTBEAT_IVL, &in<&O::liveness, &O::liveness_options::heartbeat_ivl>, 0, INT_MAX},
    {ZMQ_HEARTBEAT_TIMEOUT, &in<&O::liveness, &O::liveness_options::heartbeat_timeout>, 0, INT_MAX},
    {ZMQ_HANDSHAKE_IVL, &in<&O::liveness, &O::liveness_options::handshake_ivl>, 0, INT_MAX},
    {ZMQ_CONNECT_TIMEOUT, &in<&O::reconnect, &O::reconnect_options::connect_timeout>, 0, INT_MAX},
    {ZMQ_TOS, &in<&O::kernel, &O::kernel_options::tos>, 0, INT_MAX},
    {ZMQ_TCP_MAXRT, &in<&O::kernel, &O::kernel_options::tcp_maxrt>, 0, INT_MAX},
    {ZMQ_USE_FD, &in<&O::listening, &O::listen_options::use_fd>, -1, INT_MAX},
    {ZMQ_RATE, &in<&O::compat, &O::compat_options::rate>, 1, INT_MAX},
    {ZMQ_RECOVERY_IVL, &in<&O::compat, &O::compat_options::recovery_ivl>, 0, INT_MAX},
    {ZMQ_MULTICAST_HOPS, &in<&O::compat, &O::compat_options::multicast_hops>, 1, INT_MAX},
    {ZMQ_MULTICAST_MAXTPDU, &in<&O::compat, &O::compat_options::multicast_maxtpdu>, 1, INT_MAX},
};

const int_option *find_int_option(int option) {
    for (const auto &o : int_options)
        if (o.option == option)
            return &o;
    return nullptr;
}

// Boolean options taking exactly 0 or 1 (libzmq's "strict" booleans).
// invert: the option states the opposite of the field (IPV4ONLY vs ipv6).
struct flag_option {
    int option;
    field_ref<bool> field;
    bool invert;
};

constexpr flag_option flag_options[] = {
    {ZMQ_IMMEDIATE, &top<&O::immediate>, false},
    {ZMQ_IPV6, &top<&O::ipv6>, false},
    {ZMQ_IPV4ONLY, &top<&O::ipv6>, true},
    {ZMQ_CONFLATE, &top<&O::conflate>, false},
};

const flag_option *find_flag_option(int option) {
    for (const auto &o : flag_options)
        if (o.option == option)
            return &o;
    return nullptr;
}

bool read_int(const void *val, size_t len, int &out) {
    if (!val || len != sizeof(int))
        return false;
    std::memcpy(&out, val, sizeof(int));
    return true;
}

// Fixed-size values (int, int64, uint64): the caller's buffer must be exactly
// that size, as libzmq's options require.
template <typename T>
int put_exact(void *val, size_t *len, T v) {
    if (*len != sizeof(T))
        return fail();
    std::memcpy(val, &v, sizeof(T));
    return 0;
}

template <typename T>
int take_exact(const void *val, size_t len, T &out) {
    if (!val || len != sizeof(T))
        return fail();
    std::memcpy(&out, val, sizeof(T));
    return 0;
}

// Byte strings: the buffer must hold them (plus a NUL when asked); the rest
// of the buffer is zeroed and *len becomes the length written (as libzmq).
int put_bytes(void *val, size_t *len, const std::string &s, bool nul) {
    const size_t need = s.size() + (nul ? 1 : 0);
    if (*len < need)
        return fail();
    std::memcpy(val, s.data(), s.size());
    std::memset(static_cast<char *>(val) + s.size(), 0, *len - s.size());
    *len = need;
    return 0;
}

// libzmq's "allow empty, strict" strings: (NULL, 0) clears; otherwise
// 1..max_len bytes from a non-null pointer.
int take_string(const void *val, size_t len, size_t max_len, std::string &out) {
    if (!val && len == 0) {
        out.clear();
        return 0;
    }
    if (!val || len == 0 || len > max_len)
        return fail();
    out.assign(static_cast<const char *>(val), len);
    return 0;
}

// Like take_string, but an empty text is allowed too (and clears).
int take_optional_string(const void *val, size_t len, size_t max_len, std::string &out) {
    if (len == 0) {
        out.clear();
        return 0;
    }
    return take_string(val, len, max_len, out);
}

// ZMQ_IPC_FILTER_*: (NULL, 0) clears the set; one id adds to it.
template <typename Id>
int add_to_filter(const void *val, size_t len, std::set<Id> &filter) {
    if (!val && len == 0) {
        filter.clear();
        return 0;
    }
    Id id;
    if (take_exact(val, len, id) != 0)
        return -1;
    filter.insert(id);
    return 0;
}

constexpr size_t max_device_name = 16;  // IFNAMSIZ

// libzmq's ZMQ_ZERO_COPY_RECV context option: named only in its draft API,
// yet accepted by its stable builds, so programs may pass the number.
constexpr int ctx_zero_copy_recv = 10;

}  // namespace

// ---- options_t ----

bool options_t::conflate_out() const {
    return conflate && (type == ZMQ_DEALER || type == ZMQ_PUSH || type == ZMQ_PUB);
}

bool options_t::conflate_in() const {
    return conflate && (type == ZMQ_DEALER || type == ZMQ_PULL || type == ZMQ_SUB);
}

int options_t::set(int option, const void *val, size_t len) {
    int v = 0;
    const bool is_int = read_int(val, len, v);
    if (const int_option *o = find_int_option(option)) {
        if (!is_int || v < o->min || v > o->max)
            return fail();
        o->field(*this) = v;
        return 0;
    }
    if (const flag_option *o = find_flag_option(option)) {
        if (!is_int || (v != 0 && v != 1))
            return fail();
        o->field(*this) = (v != 0) != o->invert;
        return 0;
    }
    switch (option) {
    case ZMQ_HEARTBEAT_TTL:
        // Carried in deciseconds in 16 bits; libzmq truncates to 100 ms steps.
        if (!is_int || v / 100 < 0 || v / 100 > 65535)
            return fail();
        liveness.heartbeat_ttl = v / 100 * 100;
        return 0;
    case ZMQ_MAXMSGSIZE: {
        int64_t m;
        if (take_exact(val, len, m) != 0)
            return -1;
        maxmsgsize = m;
        return 0;
    }
    case ZMQ_AFFINITY: return take_exact(val, len, compat.affinity);
    default:
        if (field_ref<bool> field = lenient_bool(option)) {
            if (!is_int)
                return fail();
            field(*this) = v != 0;
            return 0;
        }
        return set_string(option, val, len);
    }
}

// String-valued and list-valued options.
int options_t::set_string(int option, const void *val, size_t len) {
    switch (option) {
    case ZMQ_ROUTING_ID:
        if (!val || len == 0 || len > 255)
            return fail();
        routing_id.assign(static_cast<const char *>(val), len);
        return 0;
    case ZMQ_CONNECT_ROUTING_ID:
        // As libzmq 4.3.5: only the routing types (ROUTER, its REP, STREAM) take it.
        if (type != ZMQ_ROUTER && type != ZMQ_REP && type != ZMQ_STREAM)
            return fail();
        if (!val || len == 0 || len > 255)
            return fail();
        connect_routing_id.assign(static_cast<const char *>(val), len);
        return 0;
    case ZMQ_BINDTODEVICE: return take_string(val, len, max_device_name, kernel.bound_device);
    // As libzmq: (NULL, 0) unsets the proxy, an empty text is EINVAL; the
    // credentials take "" or (NULL, 0) alike, up to RFC 1929's 255 bytes.
    case ZMQ_SOCKS_PROXY: return take_string(val, len, SIZE_MAX, socks.proxy);
    case ZMQ_SOCKS_USERNAME: return take_optional_string(val, len, 255, socks.username);
    case ZMQ_SOCKS_PASSWORD: return take_optional_string(val, len, 255, socks.password);
    default: return set_filter(option, val, len);
    }
}

// Accept filters; everything else is unknown here (EINVAL), which includes
// GSSAPI and VMCI options: zlink has neither, like a libzmq built without.
int options_t::set_filter(int option, const void *val, size_t len) {
    switch (option) {
    case ZMQ_TCP_ACCEPT_FILTER: {
        std::string text;
        if (take_string(val, len, 255, text) != 0)
            return -1;
        if (text.empty()) {
            filters.tcp.clear();
            return 0;
        }
        tcp_address_mask mask;
        if (tcp_address_mask::parse(text, ipv6, mask) != 0)
            return -1;
        filters.tcp.push_back(mask);
        return 0;
    }
    case ZMQ_IPC_FILTER_UID: return add_to_filter(val, len, filters.ipc_uid);
    case ZMQ_IPC_FILTER_GID: return add_to_filter(val, len, filters.ipc_gid);
    case ZMQ_IPC_FILTER_PID: return add_to_filter(val, len, filters.ipc_pid);
    default: return security_options::handles(option) ? security.set(option, val, len) : fail();
    }
}

int options_t::get(int option, void *val, size_t *len) const {
    if (!len || (!val && *len))
        return fail(EFAULT);
    auto &self = const_cast<options_t &>(*this);  // read only (see field_ref)
    if (const int_option *o = find_int_option(option))
        return put_exact(val, len, o->field(self));
    if (const flag_option *o = find_flag_option(option))
        return put_exact(val, len, int{o->field(self) != o->invert});
    switch (option) {
    case ZMQ_TYPE: return put_exact(val, len, type);
    case ZMQ_HEARTBEAT_TTL: return put_exact(val, len, liveness.heartbeat_ttl);
    case ZMQ_MAXMSGSIZE: return put_exact(val, len, maxmsgsize);
    case ZMQ_AFFINITY: return put_exact(val, len, compat.affinity);
    case ZMQ_ROUTING_ID: return put_bytes(val, len, routing_id, false);
    case ZMQ_LAST_ENDPOINT: return put_bytes(val, len, last_endpoint, true);
    case ZMQ_BINDTODEVICE: return put_bytes(val, len, kernel.bound_device, true);
    case ZMQ_SOCKS_PROXY: return put_bytes(val, len, socks.proxy, true);
    case ZMQ_SOCKS_USERNAME: return put_bytes(val, len, socks.username, true);
    case ZMQ_SOCKS_PASSWORD: return put_bytes(val, len, socks.password, true);
    default:  // security options; the write-only filters fail, as libzmq
        if (field_ref<bool> field = lenient_bool(option))
            return put_exact(val, len, int{field(self)});
        return security_options::handles(option) ? security.get(option, val, len) : fail();
    }
}

// ---- tcp_address_mask ----

namespace {

// Fills family and address from numeric text; returns the bits of the text's
// own family (32, 128) and where they start in the stored address (96 for an
// IPv4 address stored v4-mapped), or -1 with EINVAL.
int parse_mask_address(const std::string &addr, bool ipv6, tcp_address_mask &m, int &offset) {
    in_addr v4;
    offset = 0;
    if (inet_pton(AF_INET, addr.c_str(), &v4) == 1) {
        m.family = AF_INET;
        std::memcpy(m.address.data(), &v4, 4);
        if (ipv6) {  // a dual-stack listener sees IPv4 peers as ::ffff:a.b.c.d
            m.family = AF_INET6;
            m.address = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
            std::memcpy(m.address.data() + 12, &v4, 4);
            offset = 96;
        }
        return 32;
    }
    if (ipv6 && inet_pton(AF_INET6, addr.c_str(), m.address.data()) == 1) {
        m.family = AF_INET6;
        return 128;
    }
    return fail();  // not numeric, or IPv6 text without ZMQ_IPV6
}

}  // namespace

int tcp_address_mask::parse(std::string_view text, bool ipv6, tcp_address_mask &out) {
    std::string addr(text), bits;
    if (auto slash = addr.rfind('/'); slash != std::string::npos) {
        bits = addr.substr(slash + 1);
        addr.resize(slash);
        if (bits.empty())
            return fail();
    }
    if (addr.size() >= 2 && addr.front() == '[' && addr.back() == ']')
        addr = addr.substr(1, addr.size() - 2);
    tcp_address_mask m;
    int offset = 0;
    const int full = parse_mask_address(addr, ipv6, m, offset);
    if (full < 0)
        return -1;
    long n = full;
    if (!bits.empty()) {
        char *end = nullptr;
        n = std::strtol(bits.c_str(), &end, 10);
        if (*end != '\0' || n < 0 || n > full)
            return fail();
    }
    m.prefix_bits = offset + static_cast<int>(n);
    out = m;
    return 0;
}

bool tcp_address_mask::matches(const sockaddr *peer) const {
    if (!peer || peer->sa_family != family)
        return false;
    const uint8_t *theirs = family == AF_INET6
                                ? reinterpret_cast<const sockaddr_in6 *>(peer)->sin6_addr.s6_addr
                                : reinterpret_cast<const uint8_t *>(
                                      &reinterpret_cast<const sockaddr_in *>(peer)->sin_addr);
    const int whole = prefix_bits / 8, rest = prefix_bits % 8;
    if (std::memcmp(theirs, address.data(), static_cast<size_t>(whole)) != 0)
        return false;
    if (rest == 0)
        return true;
    const uint8_t keep = static_cast<uint8_t>(0xff << (8 - rest));
    return (theirs[whole] & keep) == (address[whole] & keep);
}

// ---- ctx_options_t ----

namespace {

// Stores value when it is acceptable; 0, or -1 with EINVAL.
template <typename Field>
int store_if(bool acceptable, Field &field, Field value) {
    if (!acceptable)
        return fail();
    field = value;
    return 0;
}

}  // namespace

int ctx_options_t::set(int option, int value) {
    const bool non_negative = value >= 0;
    switch (option) {
    case ZMQ_IO_THREADS: return store_if(non_negative, io_threads, value);
    case ZMQ_MAX_SOCKETS: return store_if(value >= 1, max_sockets, value);
    case ZMQ_MAX_MSGSZ: return store_if(non_negative, max_msgsz, value);
    case ZMQ_IPV6: return store_if(non_negative, ipv6, value != 0);
    case ZMQ_BLOCKY: return store_if(non_negative, blocky, value != 0);
    case ctx_zero_copy_recv: return store_if(non_negative, zero_copy_recv, value != 0);
    case ZMQ_THREAD_PRIORITY: return store_if(non_negative, thread_priority, value);
    case ZMQ_THREAD_SCHED_POLICY: return store_if(non_negative, thread_sched_policy, value);
    case ZMQ_THREAD_AFFINITY_CPU_ADD:
        if (!non_negative || value >= CPU_SETSIZE)
            return fail();
        thread_affinity_cpus.insert(value);
        return 0;
    case ZMQ_THREAD_AFFINITY_CPU_REMOVE:
        return non_negative && thread_affinity_cpus.erase(value) ? 0 : fail();
    case ZMQ_THREAD_NAME_PREFIX: thread_name_prefix = std::to_string(value); return 0;
    default: return fail();
    }
}

int ctx_options_t::get(int option) const {
    switch (option) {
    case ZMQ_IO_THREADS: return io_threads;
    case ZMQ_MAX_SOCKETS: return max_sockets;
    case ZMQ_SOCKET_LIMIT: return 65535;  // libzmq's figure for poll/epoll builds
    case ZMQ_MAX_MSGSZ: return max_msgsz;
    case ZMQ_MSG_T_SIZE: return static_cast<int>(sizeof(zmq_msg_t));
    case ZMQ_IPV6: return ipv6;
    case ZMQ_BLOCKY: return blocky;
    case ctx_zero_copy_recv: return zero_copy_recv;
    case ZMQ_THREAD_SCHED_POLICY: return thread_sched_policy;
    case ZMQ_THREAD_NAME_PREFIX: return std::atoi(thread_name_prefix.c_str());
    default: return fail();
    }
}

void ctx_options_t::apply_to(options_t &socket) const {
    socket.ipv6 = ipv6;
    socket.linger = blocky ? -1 : 0;
}

void ctx_options_t::apply_to_thread(unsigned long native_handle) const {
    const auto thread = static_cast<pthread_t>(native_handle);
    if (thread_sched_policy >= 0 || thread_priority >= 0) {
        int policy = 0;
        sched_param param{};
        if (pthread_getschedparam(thread, &policy, &param) == 0) {
            if (thread_sched_policy >= 0)
                policy = thread_sched_policy;
            // Only the real-time policies have priorities; the others take 0.
            const bool realtime = policy == SCHED_FIFO || policy == SCHED_RR;
            param.sched_priority = realtime && thread_priority >= 0 ? thread_priority : 0;
            pthread_setschedparam(thread, policy, &param);
        }
    }
    if (!thread_affinity_cpus.empty()) {
        cpu_set_t cpus;
        CPU_ZERO(&cpus);
        for (int cpu : thread_affinity_cpus)
            CPU_SET(cpu, &cpus);
        pthread_setaffinity_np(thread, sizeof cpus, &cpus);
    }
}

}  // namespace zlink
