// zmq.h's functions, defined here for bench_arms_<pattern>: each forwards to the
// same function of the calling thread's current arm (zmq_table.hpp). One
// thread-local load and one indirect call per zmq call; the figure it costs per
// message is measured with callgrind in bench/README.md ("The arms bench").
#include <cstdio>
#include <cstdlib>

#include "../common/process.hpp"
#include "zmq_table.hpp"

namespace bench::arms {

namespace {

thread_local const ZmqTable *t_table = nullptr;

[[noreturn, gnu::cold, gnu::noinline]] void no_arm(const char *function) {
    exit_error(std::string(function) +
               " called on a thread that works on no arm (a harness bug: every call "
               "must run inside a TableScope)");
}

inline const ZmqTable &table(const char *function) {
    if (__builtin_expect(t_table == nullptr, 0))
        no_arm(function);
    return *t_table;
}

}  // namespace

const ZmqTable *current_table() { return t_table; }
void set_current_table(const ZmqTable *table) { t_table = table; }

}  // namespace bench::arms

using bench::arms::table;

extern "C" {

void zmq_version(int *major, int *minor, int *patch) {
    table(__func__).zmq_version(major, minor, patch);
}
int zmq_errno(void) { return table(__func__).zmq_errno(); }
const char *zmq_strerror(int errnum) { return table(__func__).zmq_strerror(errnum); }
void *zmq_ctx_new(void) { return table(__func__).zmq_ctx_new(); }
int zmq_ctx_set(void *context, int option, int optval) {
    return table(__func__).zmq_ctx_set(context, option, optval);
}
int zmq_ctx_get(void *context, int option) { return table(__func__).zmq_ctx_get(context, option); }
int zmq_ctx_term(void *context) { return table(__func__).zmq_ctx_term(context); }
void *zmq_socket(void *context, int type) { return table(__func__).zmq_socket(context, type); }
int zmq_close(void *s) { return table(__func__).zmq_close(s); }
int zmq_setsockopt(void *s, int option, const void *optval, size_t optvallen) {
    return table(__func__).zmq_setsockopt(s, option, optval, optvallen);
}
int zmq_getsockopt(void *s, int option, void *optval, size_t *optvallen) {
    return table(__func__).zmq_getsockopt(s, option, optval, optvallen);
}
int zmq_bind(void *s, const char *addr) { return table(__func__).zmq_bind(s, addr); }
int zmq_connect(void *s, const char *addr) { return table(__func__).zmq_connect(s, addr); }
int zmq_send(void *s, const void *buf, size_t len, int flags) {
    return table(__func__).zmq_send(s, buf, len, flags);
}
int zmq_msg_init(zmq_msg_t *msg) { return table(__func__).zmq_msg_init(msg); }
int zmq_msg_init_data(zmq_msg_t *msg, void *data, size_t size, zmq_free_fn *ffn, void *hint) {
    return table(__func__).zmq_msg_init_data(msg, data, size, ffn, hint);
}
int zmq_msg_close(zmq_msg_t *msg) { return table(__func__).zmq_msg_close(msg); }
int zmq_msg_recv(zmq_msg_t *msg, void *s, int flags) {
    return table(__func__).zmq_msg_recv(msg, s, flags);
}
int zmq_msg_send(zmq_msg_t *msg, void *s, int flags) {
    return table(__func__).zmq_msg_send(msg, s, flags);
}
void *zmq_msg_data(zmq_msg_t *msg) { return table(__func__).zmq_msg_data(msg); }
size_t zmq_msg_size(const zmq_msg_t *msg) { return table(__func__).zmq_msg_size(msg); }
int zmq_msg_more(const zmq_msg_t *msg) { return table(__func__).zmq_msg_more(msg); }
int zmq_poll(zmq_pollitem_t *items, int nitems, long timeout) {
    return table(__func__).zmq_poll(items, nitems, timeout);
}

}  // extern "C"
