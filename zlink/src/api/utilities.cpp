// The small corners of the C API: errors, versions, capabilities, Z85, and
// the helpers libzmq's perf tools and tests use (stopwatch, sleep, threads,
// atomic counters).  Null handles get an errno instead of a crash.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <thread>
#include <utility>

#include "api/boundary.hpp"
#include "api/security_api.hpp"
#include "wire/z85.hpp"
#include "zlink.h"
#include "zmq.h"

using zlink::api::guarded;

// ---- errors, versions, capabilities ----

ZLINK_API int zmq_errno(void) { return errno; }

ZLINK_API const char *zmq_strerror(int errnum) {
    switch (errnum) {
    case EFSM: return "Operation cannot be accomplished in current state";
    case ENOCOMPATPROTO: return "The protocol is not compatible with the socket type";
    case ETERM: return "Context was terminated";
    case EMTHREAD: return "No thread available";
    case EHOSTUNREACH: return "Host unreachable";  // libzmq's wording, not libc's
    default: return std::strerror(errnum);
    }
}

// The API level zlink implements: programs compare it with ZMQ_VERSION.
ZLINK_API void zmq_version(int *major, int *minor, int *patch) {
    if (major)
        *major = ZMQ_VERSION_MAJOR;
    if (minor)
        *minor = ZMQ_VERSION_MINOR;
    if (patch)
        *patch = ZMQ_VERSION_PATCH;
}

ZLINK_API void zlink_version(int *major, int *minor, int *patch) {
    if (major)
        *major = ZLINK_VERSION_MAJOR;
    if (minor)
        *minor = ZLINK_VERSION_MINOR;
    if (patch)
        *patch = ZLINK_VERSION_PATCH;
}

// Yes only for what works: ipc always, curve once the mechanism exists; no
// pgm, tipc, norm, gssapi, vmci, draft, WS, WSS.
ZLINK_API int zmq_has(const char *capability) {
    if (!capability)
        return 0;
    if (std::strcmp(capability, "ipc") == 0)
        return 1;
    if (std::strcmp(capability, "curve") == 0)
        return zlink::api::curve_available() ? 1 : 0;
    return 0;
}

// ---- Z85 (RFC 32) ----

ZLINK_API char *zmq_z85_encode(char *dest, const uint8_t *data, size_t size) {
    if (!dest || (!data && size) || !zlink::wire::z85_encode(dest, data, size)) {
        errno = EINVAL;
        return nullptr;
    }
    return dest;
}

ZLINK_API uint8_t *zmq_z85_decode(uint8_t *dest, const char *string) {
    if (!dest || !string || !zlink::wire::z85_decode(dest, string, std::strlen(string))) {
        errno = EINVAL;
        return nullptr;
    }
    return dest;
}

// ---- stopwatch and sleep ----

namespace {

uint64_t now_us() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
}

}  // namespace

ZLINK_API void *zmq_stopwatch_start(void) {
    return guarded<void *>(nullptr, [] { return static_cast<void *>(new uint64_t(now_us())); });
}

ZLINK_API unsigned long zmq_stopwatch_intermediate(void *watch) {
    if (!watch) {
        errno = EFAULT;
        return 0;
    }
    return static_cast<unsigned long>(now_us() - *static_cast<uint64_t *>(watch));
}

ZLINK_API unsigned long zmq_stopwatch_stop(void *watch) {
    unsigned long elapsed = zmq_stopwatch_intermediate(watch);
    delete static_cast<uint64_t *>(watch);
    return elapsed;
}

ZLINK_API void zmq_sleep(int seconds) {
    if (seconds > 0)
        std::this_thread::sleep_for(std::chrono::seconds(seconds));
}

// ---- application threads ----

namespace {

// A thread started by zmq_threadstart.  As libzmq's, it blocks every signal,
// so signals keep going to the application's own threads.
struct app_thread {
    std::thread thread;
};

// Named by itself, not by its creator (io_thread::start says why); `named` is
// set once it is, so zmq_threadstart returns a named thread.
void run_with_signals_blocked(zmq_thread_fn *fn, void *arg, std::promise<void> named) {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    pthread_setname_np(pthread_self(), "ZMQapp");
    named.set_value();
    fn(arg);
}

}  // namespace

// NULL with EINVAL for a null function; EAGAIN (or ENOMEM) when the system
// cannot make another thread (libzmq aborts there).
ZLINK_API void *zmq_threadstart(zmq_thread_fn *func, void *arg) {
    if (!func) {
        errno = EINVAL;
        return nullptr;
    }
    return guarded<void *>(nullptr, [&] {
        auto *t = new app_thread;
        try {
            std::promise<void> named;
            std::future<void> done = named.get_future();
            t->thread = std::thread(run_with_signals_blocked, func, arg, std::move(named));
            done.wait();
        } catch (...) {
            delete t;
            throw;
        }
        return static_cast<void *>(t);
    });
}

ZLINK_API void zmq_threadclose(void *thread) {
    if (!thread) {
        errno = EFAULT;
        return;
    }
    auto *t = static_cast<app_thread *>(thread);
    zlink::api::guarded_void([t] { t->thread.join(); });  // EDEADLK from the thread itself
    if (!t->thread.joinable())
        delete t;
}

// ---- atomic counters ----

namespace {

std::atomic<int> *as_counter(void *c) { return static_cast<std::atomic<int> *>(c); }

}  // namespace

ZLINK_API void *zmq_atomic_counter_new(void) {
    return guarded<void *>(nullptr, [] { return static_cast<void *>(new std::atomic<int>(0)); });
}

ZLINK_API void zmq_atomic_counter_set(void *c, int value) {
    if (c)
        as_counter(c)->store(value);
}

// The value before the increment.
ZLINK_API int zmq_atomic_counter_inc(void *c) {
    if (!c) {
        errno = EFAULT;
        return -1;
    }
    return as_counter(c)->fetch_add(1);
}

// 1 while the counter is non-zero after the decrement, 0 when it reached zero.
ZLINK_API int zmq_atomic_counter_dec(void *c) {
    if (!c) {
        errno = EFAULT;
        return -1;
    }
    return as_counter(c)->fetch_sub(1) - 1 != 0 ? 1 : 0;
}

ZLINK_API int zmq_atomic_counter_value(void *c) {
    if (!c) {
        errno = EFAULT;
        return -1;
    }
    return as_counter(c)->load();
}

ZLINK_API void zmq_atomic_counter_destroy(void **counter_p) {
    if (!counter_p)
        return;
    delete as_counter(*counter_p);
    *counter_p = nullptr;
}
