// The zmq.h functions the harness calls, as one table per arm (filled by dlsym in
// the arm's link-map namespace, namespaces.cpp), and the arm the calling thread is
// working on. bench_arms_<pattern> links no ZeroMQ library: dispatch.cpp defines
// every function below with zmq.h's own signature and forwards the call to the
// calling thread's current table, so the pattern and harness sources that
// bench_<pattern> compiles against one library run unchanged on any arm.
#pragma once

#include <zmq.h>

namespace bench::arms {

// X(name): every zmq.h function the harness (common/, patterns/) calls. A new call
// in the harness that is missing here fails to link bench_arms_*, never silently.
#define BENCH_ARMS_ZMQ_FUNCTIONS(X)                                                                \
    X(zmq_version)                                                                                 \
    X(zmq_errno)                                                                                   \
    X(zmq_strerror)                                                                                \
    X(zmq_ctx_new)                                                                                 \
    X(zmq_ctx_set)                                                                                 \
    X(zmq_ctx_get)                                                                                 \
    X(zmq_ctx_term)                                                                                \
    X(zmq_socket)                                                                                  \
    X(zmq_close)                                                                                   \
    X(zmq_setsockopt)                                                                              \
    X(zmq_getsockopt)                                                                              \
    X(zmq_bind)                                                                                    \
    X(zmq_connect)                                                                                 \
    X(zmq_send)                                                                                    \
    X(zmq_msg_init)                                                                                \
    X(zmq_msg_init_data)                                                                           \
    X(zmq_msg_close)                                                                               \
    X(zmq_msg_recv)                                                                                \
    X(zmq_msg_send)                                                                                \
    X(zmq_msg_data)                                                                                \
    X(zmq_msg_size)                                                                                \
    X(zmq_msg_more)                                                                                \
    X(zmq_poll)

struct ZmqTable {
#define BENCH_ARMS_FIELD(name) decltype(&::name) name = nullptr;
    BENCH_ARMS_ZMQ_FUNCTIONS(BENCH_ARMS_FIELD)
#undef BENCH_ARMS_FIELD
};

// The table zmq_* calls on this thread go to (nullptr: none; a call then ends the
// run with exit 1, naming the function).
const ZmqTable *current_table();
void set_current_table(const ZmqTable *table);

// Selects `table` for the calling thread for the scope's lifetime.
class TableScope {
public:
    explicit TableScope(const ZmqTable &table) : previous_(current_table()) {
        set_current_table(&table);
    }
    ~TableScope() { set_current_table(previous_); }
    TableScope(const TableScope &) = delete;
    TableScope &operator=(const TableScope &) = delete;

private:
    const ZmqTable *previous_;
};

}  // namespace bench::arms
