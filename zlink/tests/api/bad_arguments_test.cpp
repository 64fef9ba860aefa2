// Every public function with bad arguments: NULL, the wrong kind of handle,
// out-of-range values, malformed endpoints, wrong socket state, a shut-down
// context.  Each case states the return value and errno libzmq 4.3.5 gives
// (where libzmq crashes or asserts instead, zlink's documented answer, marked
// "zlink:"), and after each case the context and its other sockets must still
// carry a message.  A case that ended in a signal would end this binary.
#include <sys/uio.h>

#include <climits>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "api_test_util.hpp"

namespace {

using api_test::outcome;
using api_test::run;

// What one case may touch: a live context with sentinel sockets, plus a PAIR,
// a PUB and a SUB socket of its own, and a message.
struct world {
    api_test::sentinel_ctx sentinel;
    void *ctx = sentinel.ctx;
    void *pair = zmq_socket(ctx, ZMQ_PAIR);
    void *pub = zmq_socket(ctx, ZMQ_PUB);
    void *sub = zmq_socket(ctx, ZMQ_SUB);
    zmq_msg_t msg;
    world() { zmq_msg_init(&msg); }
    ~world() {
        zmq_msg_close(&msg);
        for (void *s : {pair, pub, sub})
            zmq_close(s);
    }
};

struct bad_case {
    const char *name;
    std::function<long(world &)> call;
    long rc;
    int err;
};

void noop_timer(int, void *) {}

int int_value = 1;
const size_t int_size = sizeof(int);

std::vector<bad_case> context_cases() {
    return {
        {"ctx_term_null", [](world &) { return zmq_ctx_term(nullptr); }, -1, EFAULT},
        {"ctx_term_socket", [](world &w) { return zmq_ctx_term(w.pair); }, -1, EFAULT},
        {"ctx_shutdown_null", [](world &) { return zmq_ctx_shutdown(nullptr); }, -1, EFAULT},
        {"ctx_set_null", [](world &) { return zmq_ctx_set(nullptr, ZMQ_IO_THREADS, 1); }, -1,
         EFAULT},
        {"ctx_set_unknown", [](world &w) { return zmq_ctx_set(w.ctx, -1, 0); }, -1, EINVAL},
        {"ctx_set_negative_threads",
         [](world &w) { return zmq_ctx_set(w.ctx, ZMQ_IO_THREADS, -1); }, -1, EINVAL},
        {"ctx_set_zero_max_sockets",
         [](world &w) { return zmq_ctx_set(w.ctx, ZMQ_MAX_SOCKETS, 0); }, -1, EINVAL},
        {"ctx_set_default_priority",
         [](world &w) { return zmq_ctx_set(w.ctx, ZMQ_THREAD_PRIORITY, -1); }, -1, EINVAL},
        {"ctx_set_remove_absent_cpu",
         [](world &w) { return zmq_ctx_set(w.ctx, ZMQ_THREAD_AFFINITY_CPU_REMOVE, 3); }, -1,
         EINVAL},
        {"ctx_get_null", [](world &) { return zmq_ctx_get(nullptr, ZMQ_IO_THREADS); }, -1, EFAULT},
        {"ctx_get_unknown", [](world &w) { return zmq_ctx_get(w.ctx, -1); }, -1, EINVAL},
        {"init_negative", [](world &) { return zmq_init(-1) == nullptr ? -1L : 0L; }, -1, EINVAL},
        {"term_null", [](world &) { return zmq_term(nullptr); }, -1, EFAULT},
        {"ctx_destroy_null", [](world &) { return zmq_ctx_destroy(nullptr); }, -1, EFAULT},
    };
}

long socket_rc(void *s) { return s ? (zmq_close(s), 0L) : -1L; }

std::vector<bad_case> socket_cases() {
    return {
        {"socket_null_ctx", [](world &) { return socket_rc(zmq_socket(nullptr, ZMQ_PAIR)); }, -1,
         EFAULT},
        {"socket_ctx_is_socket", [](world &w) { return socket_rc(zmq_socket(w.pair, ZMQ_PAIR)); },
         -1, EFAULT},
        {"socket_unknown_type", [](world &w) { return socket_rc(zmq_socket(w.ctx, 99)); }, -1,
         EINVAL},
        {"socket_negative_type", [](world &w) { return socket_rc(zmq_socket(w.ctx, -1)); }, -1,
         EINVAL},
        {"close_null", [](world &) { return zmq_close(nullptr); }, -1, ENOTSOCK},
        {"close_ctx", [](world &w) { return zmq_close(w.ctx); }, -1, ENOTSOCK},
        {"setsockopt_null",
         [](world &) { return zmq_setsockopt(nullptr, ZMQ_LINGER, &int_value, int_size); }, -1,
         ENOTSOCK},
        {"setsockopt_unknown",
         [](world &w) { return zmq_setsockopt(w.pair, 9999, &int_value, int_size); }, -1, EINVAL},
        {"setsockopt_short_value",
         [](world &w) { return zmq_setsockopt(w.pair, ZMQ_SNDHWM, &int_value, 2); }, -1, EINVAL},
        {"setsockopt_null_value",
         [](world &w) { return zmq_setsockopt(w.pair, ZMQ_SNDHWM, nullptr, int_size); }, -1,
         EINVAL},
        {"setsockopt_negative_hwm",
         [](world &w) {
             int v = -5;
             return zmq_setsockopt(w.pair, ZMQ_SNDHWM, &v, sizeof v);
         },
         -1, EINVAL},
        {"setsockopt_long_routing_id",
         [](world &w) {
             char id[256] = {};
             return zmq_setsockopt(w.pair, ZMQ_ROUTING_ID, id, sizeof id);
         },
         -1, EINVAL},
        {"setsockopt_gssapi",
         [](world &w) { return zmq_setsockopt(w.pair, ZMQ_GSSAPI_SERVER, &int_value, int_size); },
         -1, EINVAL},
        {"setsockopt_subscribe_on_pair",
         [](world &w) { return zmq_setsockopt(w.pair, ZMQ_SUBSCRIBE, "a", 1); }, -1, EINVAL},
        {"getsockopt_null",
         [](world &) {
             int v;
             size_t l = sizeof v;
             return zmq_getsockopt(nullptr, ZMQ_TYPE, &v, &l);
         },
         -1, ENOTSOCK},
        {"getsockopt_unknown",
         [](world &w) {
             int v;
             size_t l = sizeof v;
             return zmq_getsockopt(w.pair, 9999, &v, &l);
         },
         -1, EINVAL},
        {"getsockopt_null_len",
         [](world &w) {
             int v;
             return zmq_getsockopt(w.pair, ZMQ_TYPE, &v, nullptr);
         },
         -1, EFAULT},  // zlink: libzmq crashes
        {"getsockopt_null_value",
         [](world &w) {
             size_t l = sizeof(int);
             return zmq_getsockopt(w.pair, ZMQ_TYPE, nullptr, &l);
         },
         -1, EFAULT},  // zlink: libzmq crashes
        {"getsockopt_small_buffer",
         [](world &w) {
             int v;
             size_t l = 2;
             return zmq_getsockopt(w.pair, ZMQ_LINGER, &v, &l);
         },
         -1, EINVAL},
        {"getsockopt_endpoint_no_room",
         [](world &w) {
             char b[1];
             size_t l = 0;
             return zmq_getsockopt(w.pair, ZMQ_LAST_ENDPOINT, b, &l);
         },
         -1, EINVAL},
        {"monitor_null_socket",
         [](world &) { return zmq_socket_monitor(nullptr, "inproc://m", ZMQ_EVENT_ALL); }, -1,
         ENOTSOCK},
        {"monitor_tcp",
         [](world &w) { return zmq_socket_monitor(w.pair, "tcp://127.0.0.1:5555", ZMQ_EVENT_ALL); },
         -1, EPROTONOSUPPORT},
        {"monitor_malformed",
         [](world &w) { return zmq_socket_monitor(w.pair, "no-scheme", ZMQ_EVENT_ALL); }, -1,
         EINVAL},
    };
}

std::vector<bad_case> endpoint_cases() {
    return {
        {"bind_null_socket", [](world &) { return zmq_bind(nullptr, "inproc://x"); }, -1, ENOTSOCK},
        {"bind_null_address", [](world &w) { return zmq_bind(w.pair, nullptr); }, -1,
         EINVAL},  // zlink: libzmq crashes
        {"bind_empty", [](world &w) { return zmq_bind(w.pair, ""); }, -1, EINVAL},
        {"bind_no_address", [](world &w) { return zmq_bind(w.pair, "tcp://"); }, -1, EINVAL},
        {"bind_unknown_protocol", [](world &w) { return zmq_bind(w.pair, "foo://x"); }, -1,
         EPROTONOSUPPORT},
        {"bind_pgm", [](world &w) { return zmq_bind(w.pair, "pgm://eth0;239.1.1.1:5555"); }, -1,
         EPROTONOSUPPORT},
        {"bind_port_out_of_range",
         [](world &w) { return zmq_bind(w.pair, "tcp://127.0.0.1:99999"); }, -1, EINVAL},
        {"bind_unknown_interface",
         [](world &w) { return zmq_bind(w.pair, "tcp://no-such-interface.invalid:5555"); }, -1,
         ENODEV},
        {"bind_inproc_taken", [](world &w) { return zmq_bind(w.pair, "inproc://api-sentinel"); },
         -1, EADDRINUSE},
        {"connect_null_socket", [](world &) { return zmq_connect(nullptr, "inproc://x"); }, -1,
         ENOTSOCK},
        {"connect_null_address", [](world &w) { return zmq_connect(w.pair, nullptr); }, -1,
         EINVAL},  // zlink: libzmq crashes
        {"connect_no_port", [](world &w) { return zmq_connect(w.pair, "tcp://localhost"); }, -1,
         EINVAL},
        {"connect_wildcard_port", [](world &w) { return zmq_connect(w.pair, "tcp://127.0.0.1:*"); },
         -1, EINVAL},
        {"connect_unknown_protocol",
         [](world &w) { return zmq_connect(w.pair, "udp://127.0.0.1:5555"); }, -1, EPROTONOSUPPORT},
        {"unbind_never_bound", [](world &w) { return zmq_unbind(w.pair, "tcp://127.0.0.1:5555"); },
         -1, ENOENT},
        {"unbind_null_address", [](world &w) { return zmq_unbind(w.pair, nullptr); }, -1, EINVAL},
        {"disconnect_never_connected",
         [](world &w) { return zmq_disconnect(w.pair, "tcp://127.0.0.1:5555"); }, -1, ENOENT},
        {"disconnect_null_socket",
         [](world &) { return zmq_disconnect(nullptr, "tcp://127.0.0.1:5555"); }, -1, ENOTSOCK},
    };
}

std::vector<bad_case> send_recv_cases() {
    return {
        {"send_null_socket", [](world &) { return zmq_send(nullptr, "x", 1, 0); }, -1, ENOTSOCK},
        {"send_null_buffer", [](world &w) { return zmq_send(w.pair, nullptr, 5, ZMQ_DONTWAIT); },
         -1, EFAULT},  // zlink: libzmq asserts
        {"send_no_peer", [](world &w) { return zmq_send(w.pair, "x", 1, ZMQ_DONTWAIT); }, -1,
         EAGAIN},
        {"send_on_sub", [](world &w) { return zmq_send(w.sub, "x", 1, 0); }, -1, ENOTSUP},
        {"send_const_null_socket", [](world &) { return zmq_send_const(nullptr, "x", 1, 0); }, -1,
         ENOTSOCK},
        {"send_const_null_buffer", [](world &w) { return zmq_send_const(w.pair, nullptr, 5, 0); },
         -1, EFAULT},  // zlink: libzmq sends garbage
        {"recv_null_socket",
         [](world &) {
             char b[4];
             return zmq_recv(nullptr, b, sizeof b, 0);
         },
         -1, ENOTSOCK},
        {"recv_null_buffer", [](world &w) { return zmq_recv(w.pair, nullptr, 5, ZMQ_DONTWAIT); },
         -1, EFAULT},  // zlink: libzmq asserts
        {"recv_nothing_there",
         [](world &w) {
             char b[4];
             return zmq_recv(w.pair, b, sizeof b, ZMQ_DONTWAIT);
         },
         -1, EAGAIN},
        {"recv_on_pub",
         [](world &w) {
             char b[4];
             return zmq_recv(w.pub, b, sizeof b, 0);
         },
         -1, ENOTSUP},
        {"sendiov_null_socket",
         [](world &) {
             iovec v{};
             return zmq_sendiov(nullptr, &v, 1, 0);
         },
         -1, ENOTSOCK},
        {"sendiov_null_vector", [](world &w) { return zmq_sendiov(w.pair, nullptr, 1, 0); }, -1,
         EINVAL},
        {"sendiov_zero_count",
         [](world &w) {
             iovec v{};
             return zmq_sendiov(w.pair, &v, 0, 0);
         },
         -1, EINVAL},
        {"recviov_null_count",
         [](world &w) {
             iovec v{};
             return zmq_recviov(w.pair, &v, nullptr, 0);
         },
         -1, EINVAL},
        {"recviov_zero_count",
         [](world &w) {
             iovec v{};
             size_t n = 0;
             return zmq_recviov(w.pair, &v, &n, 0);
         },
         -1, EINVAL},
        {"recviov_nothing_there",
         [](world &w) {
             iovec v{};
             size_t n = 1;
             return zmq_recviov(w.pair, &v, &n, ZMQ_DONTWAIT);
         },
         -1, EAGAIN},
    };
}

std::vector<bad_case> msg_cases() {
    return {
        {"msg_init_null", [](world &) { return zmq_msg_init(nullptr); }, -1,
         EFAULT},  // zlink: libzmq crashes
        {"msg_init_size_null", [](world &) { return zmq_msg_init_size(nullptr, 8); }, -1, EFAULT},
        {"msg_init_size_huge", [](world &w) { return zmq_msg_init_size(&w.msg, SIZE_MAX); }, -1,
         ENOMEM},
        {"msg_init_data_null_data",
         [](world &w) { return zmq_msg_init_data(&w.msg, nullptr, 5, nullptr, nullptr); }, -1,
         EINVAL},
        {"msg_send_null_msg", [](world &w) { return zmq_msg_send(nullptr, w.pair, 0); }, -1,
         EFAULT},
        {"msg_send_null_socket", [](world &w) { return zmq_msg_send(&w.msg, nullptr, 0); }, -1,
         ENOTSOCK},
        {"msg_send_closed_msg",
         [](world &w) {
             zmq_msg_close(&w.msg);
             long rc = zmq_msg_send(&w.msg, w.pair, 0);
             zmq_msg_init(&w.msg);
             return rc;
         },
         -1, EFAULT},
        {"msg_recv_null_msg", [](world &w) { return zmq_msg_recv(nullptr, w.pair, ZMQ_DONTWAIT); },
         -1, EFAULT},
        {"msg_recv_null_socket", [](world &w) { return zmq_msg_recv(&w.msg, nullptr, 0); }, -1,
         ENOTSOCK},
        {"msg_close_twice",
         [](world &w) {
             zmq_msg_close(&w.msg);
             long rc = zmq_msg_close(&w.msg);
             zmq_msg_init(&w.msg);
             return rc;
         },
         -1, EFAULT},
        {"msg_close_null", [](world &) { return zmq_msg_close(nullptr); }, -1, EFAULT},
        {"msg_copy_from_closed",
         [](world &w) {
             zmq_msg_t c;
             zmq_msg_init(&c);
             zmq_msg_close(&c);
             return zmq_msg_copy(&w.msg, &c);
         },
         -1, EFAULT},
        {"msg_move_from_closed",
         [](world &w) {
             zmq_msg_t c;
             zmq_msg_init(&c);
             zmq_msg_close(&c);
             return zmq_msg_move(&w.msg, &c);
         },
         -1, EFAULT},
        {"msg_copy_null", [](world &w) { return zmq_msg_copy(&w.msg, nullptr); }, -1, EFAULT},
        {"msg_data_null", [](world &) { return zmq_msg_data(nullptr) == nullptr ? -1L : 0L; }, -1,
         EFAULT},
        {"msg_more_null", [](world &) { return zmq_msg_more(nullptr); }, -1, EFAULT},
        {"msg_get_unknown", [](world &w) { return zmq_msg_get(&w.msg, 999); }, -1, EINVAL},
        {"msg_get_srcfd_local", [](world &w) { return zmq_msg_get(&w.msg, ZMQ_SRCFD); }, -1,
         EINVAL},
        {"msg_set_anything", [](world &w) { return zmq_msg_set(&w.msg, ZMQ_MORE, 1); }, -1, EINVAL},
        {"msg_gets_no_metadata",
         [](world &w) { return zmq_msg_gets(&w.msg, "Socket-Type") ? 0L : -1L; }, -1, EINVAL},
        {"msg_gets_null_property",
         [](world &w) { return zmq_msg_gets(&w.msg, nullptr) ? 0L : -1L; }, -1, EINVAL},
        {"sendmsg_null_socket", [](world &w) { return zmq_sendmsg(nullptr, &w.msg, 0); }, -1,
         ENOTSOCK},
        {"recvmsg_null_socket", [](world &w) { return zmq_recvmsg(nullptr, &w.msg, 0); }, -1,
         ENOTSOCK},
    };
}

std::vector<bad_case> poll_proxy_cases() {
    return {
        {"poll_null_items", [](world &) { return zmq_poll(nullptr, 1, 0); }, -1, EFAULT},
        {"poll_negative_count",
         [](world &w) {
             zmq_pollitem_t i{w.pair, 0, ZMQ_POLLIN, 0};
             return zmq_poll(&i, -1, 0);
         },
         -1, EINVAL},
        {"poll_ctx_as_socket",
         [](world &w) {
             zmq_pollitem_t i{w.ctx, 0, ZMQ_POLLIN, 0};
             return zmq_poll(&i, 1, 0);
         },
         -1, ENOTSOCK},
        {"poll_nothing_forever", [](world &) { return zmq_poll(nullptr, 0, -1); }, -1,
         EFAULT},  // zlink: libzmq sleeps ~71 minutes
        {"proxy_null_frontend", [](world &w) { return zmq_proxy(nullptr, w.pair, nullptr); }, -1,
         EFAULT},
        {"proxy_steerable_null_backend",
         [](world &w) { return zmq_proxy_steerable(w.pair, nullptr, nullptr, nullptr); }, -1,
         EFAULT},
        {"proxy_ctx_as_socket", [](world &w) { return zmq_proxy(w.ctx, w.pair, nullptr); }, -1,
         ENOTSOCK},
        {"device_null", [](world &) { return zmq_device(ZMQ_QUEUE, nullptr, nullptr); }, -1,
         EFAULT},
    };
}

std::vector<bad_case> utility_cases() {
    return {
        {"has_null",
         [](world &) {
             errno = 0;
             return zmq_has(nullptr) == 0 ? -1L : 0L;
         },
         -1, 0},
        {"z85_encode_odd_size",
         [](world &) {
             char d[16];
             uint8_t s[3] = {};
             return zmq_z85_encode(d, s, 3) ? 0L : -1L;
         },
         -1, EINVAL},
        {"z85_encode_null_dest",
         [](world &) {
             uint8_t s[4] = {};
             return zmq_z85_encode(nullptr, s, 4) ? 0L : -1L;
         },
         -1, EINVAL},
        {"z85_decode_null_text",
         [](world &) {
             uint8_t d[8];
             return zmq_z85_decode(d, nullptr) ? 0L : -1L;
         },
         -1, EINVAL},  // zlink: libzmq crashes
        {"z85_decode_bad_length",
         [](world &) {
             uint8_t d[8];
             return zmq_z85_decode(d, "abc") ? 0L : -1L;
         },
         -1, EINVAL},
        {"z85_decode_bad_char",
         [](world &) {
             uint8_t d[8];
             return zmq_z85_decode(d, "abc\"e") ? 0L : -1L;
         },
         -1, EINVAL},
        {"z85_decode_overflow",
         [](world &) {
             uint8_t d[8];
             return zmq_z85_decode(d, "#####") ? 0L : -1L;
         },
         -1, EINVAL},
#ifdef ZLINK_HAVE_CURVE
        // zlink: libzmq dereferences NULL keys; zlink refuses them. A secret key that
        // is not 40 Z85 characters is EINVAL in both.
        {"curve_keypair_null", [](world &) { return zmq_curve_keypair(nullptr, nullptr); }, -1,
         EINVAL},
        {"curve_public_bad_key",
         [](world &) {
             char p[41];
             return zmq_curve_public(p, "short");
         },
         -1, EINVAL},
#else
        {"curve_keypair",
         [](world &) {
             char p[41], s[41];
             return zmq_curve_keypair(p, s);
         },
         -1, ENOTSUP},
        {"curve_public",
         [](world &) {
             char p[41];
             return zmq_curve_public(p, "0000000000000000000000000000000000000000");
         },
         -1, ENOTSUP},
#endif
        {"atomic_inc_null", [](world &) { return zmq_atomic_counter_inc(nullptr); }, -1, EFAULT},
        {"atomic_dec_null", [](world &) { return zmq_atomic_counter_dec(nullptr); }, -1, EFAULT},
        {"atomic_value_null", [](world &) { return zmq_atomic_counter_value(nullptr); }, -1,
         EFAULT},
        {"atomic_destroy_null",
         [](world &) {
             errno = 0;
             zmq_atomic_counter_destroy(nullptr);
             zmq_atomic_counter_set(nullptr, 1);
             return -1L;
         },
         -1, 0},
        {"stopwatch_null",
         [](world &) { return static_cast<long>(zmq_stopwatch_intermediate(nullptr)) - 1; }, -1,
         EFAULT},
        {"threadstart_null", [](world &) { return zmq_threadstart(nullptr, nullptr) ? 0L : -1L; },
         -1, EINVAL},
        {"threadclose_null",
         [](world &) {
             zmq_threadclose(nullptr);
             return -1L;
         },
         -1, EFAULT},
        {"timers_destroy_null", [](world &) { return zmq_timers_destroy(nullptr); }, -1,
         EFAULT},  // zlink: libzmq crashes
        {"timers_add_ctx", [](world &w) { return zmq_timers_add(w.ctx, 10, noop_timer, nullptr); },
         -1, EFAULT},
        {"timers_add_null_handler",
         [](world &) {
             void *t = zmq_timers_new();
             long rc = zmq_timers_add(t, 10, nullptr, nullptr);
             int e = errno;
             zmq_timers_destroy(&t);
             errno = e;
             return rc;
         },
         -1, EFAULT},
        {"timers_cancel_unknown",
         [](world &) {
             void *t = zmq_timers_new();
             long rc = zmq_timers_cancel(t, 42);
             int e = errno;
             zmq_timers_destroy(&t);
             errno = e;
             return rc;
         },
         -1, EINVAL},
        {"timers_execute_null", [](world &) { return zmq_timers_execute(nullptr); }, -1, EFAULT},
    };
}

std::vector<bad_case> all_cases() {
    std::vector<bad_case> all;
    for (auto part : {context_cases(), socket_cases(), endpoint_cases(), send_recv_cases(),
                      msg_cases(), poll_proxy_cases(), utility_cases()})
        all.insert(all.end(), part.begin(), part.end());
    return all;
}

// gtest prints a parameter by its name, not as a byte dump.
void PrintTo(const bad_case &c, std::ostream *os) { *os << c.name; }

class BadArguments : public ::testing::TestWithParam<bad_case> {};

TEST_P(BadArguments, FailAsLibzmqAndLeaveTheContextWorking) {
    const bad_case &c = GetParam();
    world w;
    outcome o = run([&] { return c.call(w); });
    EXPECT_EQ(o.rc, c.rc) << c.name;
    EXPECT_EQ(o.err, c.err) << c.name << ": errno " << o.err << " (" << zmq_strerror(o.err) << ")";
    EXPECT_TRUE(w.sentinel.alive()) << c.name << " broke the context";
}

INSTANTIATE_TEST_SUITE_P(EveryFunction, BadArguments, ::testing::ValuesIn(all_cases()),
                         [](const auto &info) { return std::string(info.param.name); });

// A socket of a context that zmq_ctx_shutdown ended: every call is ETERM
// (the handles stay valid until zmq_close, as in libzmq).
TEST(BadArguments, CallsAfterContextShutdownFailWithEterm) {
    void *ctx = zmq_ctx_new();
    void *s = zmq_socket(ctx, ZMQ_PAIR);
    ASSERT_EQ(zmq_ctx_shutdown(ctx), 0);
    char buf[4];
    int v = 0;
    size_t len = sizeof v;
    EXPECT_EQ(run([&] { return zmq_send(s, "x", 1, 0); }).err, ETERM);
    EXPECT_EQ(run([&] { return zmq_recv(s, buf, sizeof buf, 0); }).err, ETERM);
    EXPECT_EQ(run([&] { return zmq_setsockopt(s, ZMQ_LINGER, &v, sizeof v); }).err, ETERM);
    EXPECT_EQ(run([&] { return zmq_getsockopt(s, ZMQ_LINGER, &v, &len); }).err, ETERM);
    EXPECT_EQ(run([&] { return zmq_bind(s, "inproc://after-shutdown"); }).err, ETERM);
    EXPECT_EQ(run([&] { return zmq_connect(s, "inproc://after-shutdown"); }).err, ETERM);
    EXPECT_EQ(run([&] { return socket_rc(zmq_socket(ctx, ZMQ_PAIR)); }).err, ETERM);
    EXPECT_EQ(zmq_close(s), 0);
    EXPECT_EQ(zmq_ctx_term(ctx), 0);
}

}  // namespace
