#include "core/socket_base.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/ctx.hpp"
#include "core/io_object.hpp"
#include "core/socket_registry.hpp"
#include "core/transport.hpp"
#include "zmq.h"

namespace zlink {

namespace {
using clock_type = std::chrono::steady_clock;

// A cheap monotonic tick for send's command throttle: the TSC where there is
// one (a few ns, no system call), else the steady clock in nanoseconds.  The
// interval is about 1 ms either way (3M ticks: 1 ms at 3 GHz; libzmq 4.3.5
// uses the same figure).
#if defined(__x86_64__) || defined(__i386__)
uint64_t ticks_now() { return __builtin_ia32_rdtsc(); }
constexpr uint64_t send_check_interval = 3000000;
#else
uint64_t ticks_now() {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now().time_since_epoch())
            .count());
}
constexpr uint64_t send_check_interval = 1000000;
#endif

// Rounded up: a wait of floor(99.97 ms) = 99 ms woke up with 0.97 ms left, which
// read as 0 and returned EAGAIN ~1 ms before ZMQ_RCVTIMEO / SNDTIMEO; libzmq
// 4.3.5 never returns before the timeout. A loop that calls recv until its own
// deadline (a lazy-pirate client's 1 s reply timeout in 100 ms calls) then made
// an 11th call and waited 1.09 s (faults run 20261202T134258Z-0bff, REQ_REP cut:
// resume ~175 ms after libzmq's). zlink/tests/faults/blocking_timeout_test.cpp.
long ms_left(clock_type::time_point deadline) {
    return std::chrono::ceil<std::chrono::milliseconds>(deadline - clock_type::now()).count();
}

// The blocking half of send and recv: retry `attempt` (0, or -1 with errno) while
// it fails with EAGAIN, processing commands in between (they wake us when a pipe
// becomes writable/readable), until timeout_ms passes (-1 = forever) -> EAGAIN.
//
// It sleeps as soon as there is nothing to do; it does not yield its core first.
// The yield was a bet that the only other runnable thread on the core is our
// peer; on a host with any other work it handed the core to that work for a whole
// time slice (EEVDF: ~3 ms whatever its nice level): tcp 64 B REQ/REP with a core
// per side, p50 37-105 us against libzmq's 33-36 and 30-35 without the yield;
// PUSH/PULL at HWM 1000, 1.6-4.4 M msg/s against 5.6-8.6 M without it.
// docs/profiling/2026-11-26-yield-under-load.md.

template <typename Process, typename Attempt>
int retry_until(int timeout_ms, Process process, Attempt attempt) {
    // No clock read without a timeout: a blocking recv waits about once per large
    // message, and the two reads were ~40 instructions of it.
    const auto deadline = timeout_ms < 0
                              ? clock_type::time_point{}
                              : clock_type::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
        const int wait = timeout_ms < 0 ? -1 : static_cast<int>(ms_left(deadline));
        if (timeout_ms > 0 && wait <= 0) {
            errno = EAGAIN;
            return -1;
        }
        if (process(wait) != 0)
            return -1;
        if (attempt() == 0)
            return 0;
        if (errno != EAGAIN)
            return -1;
    }
}
}  // namespace

socket_base_t *socket_base_t::create(int type, ctx_t *ctx) {
    for (const socket_type_entry &e : socket_type_table()) {
        if (e.type != type)
            continue;
        socket_base_t *s = e.create(ctx);
        if (!s)
            errno = ENOMEM;
        return s;
    }
    errno = EINVAL;
    return nullptr;
}

socket_base_t::socket_base_t(ctx_t *ctx, int type) : ctx_(ctx) {
    ctx->options().apply_to(options);  // ZMQ_IPV6, ZMQ_BLOCKY defaults
    options.type = type;
}

socket_base_t::~socket_base_t() { tag_ = dead_tag; }

int socket_base_t::xsetsockopt(int, const void *, size_t) {
    errno = EINVAL;
    return -1;
}

int socket_base_t::xgetsockopt(int, void *, size_t *) {
    errno = EINVAL;
    return -1;
}

int socket_base_t::process_commands(int timeout_ms) {
    if (timeout_ms != 0 && mailbox_.wait(timeout_ms) < 0 && errno == EINTR) {
        mailbox_.process();
        errno = terminated_ ? ETERM : EINTR;
        return -1;
    }
    mailbox_.process();
    if (terminated_) {
        errno = ETERM;
        return -1;
    }
    return 0;
}

// Why send throttles: run on every send, the commands a reader posts as it
// drains a pipe (activate_write, carrying its read count) reach the sender at
// once, so with a quick IO thread a non-blocking sender never fills its pipe
// and never sees SNDHWM (libzmq's test_hwm_pubsub sends 6000 messages with
// DONTWAIT into a pipe of 2000 and expects EAGAIN).  libzmq 4.3.5 looks at a
// sender's commands at most about once per millisecond, and programs written
// for it expect a burst to fill the pipe.  So do we: commands queued within
// the interval wait for the next send after it, for the blocking path (which
// always runs them), or for the send after one that failed with EAGAIN.
// When nothing is queued this costs one atomic load.
int socket_base_t::process_commands_throttled() {
    if (mailbox_.has_work()) {
        const uint64_t now = ticks_now();
        // now < last: the TSC of another CPU (after a migration) may lag ours.
        if (now < last_send_check_ || now - last_send_check_ > send_check_interval) {
            last_send_check_ = now;
            return process_commands(0);
        }
    }
    if (terminated_) {
        errno = ETERM;
        return -1;
    }
    return 0;
}

int socket_base_t::setsockopt(int option, const void *val, size_t len) {
    if (process_commands(0) != 0)
        return -1;
    int rc = xsetsockopt(option, val, len);
    if (rc == 0 || errno != EINVAL)
        return rc;
    rc = options.set(option, val, len);
    // As libzmq: new HWMs apply to the pipes already connected too.
    if (rc == 0 && (option == ZMQ_SNDHWM || option == ZMQ_RCVHWM))
        for (pipe_t *p : pipes_)
            p->update_hwms(options.sndhwm, options.rcvhwm);
    return rc;
}

int socket_base_t::getsockopt(int option, void *val, size_t *len) {
    // libzmq answers these four from the socket itself, into any buffer of at
    // least an int (the rest zeroed); the options proper want an exact size.
    if (option == ZMQ_RCVMORE || option == ZMQ_FD || option == ZMQ_EVENTS ||
        option == ZMQ_THREAD_SAFE) {
        if (!val || !len || *len < sizeof(int)) {
            errno = EINVAL;
            return -1;
        }
        int v;
        if (option == ZMQ_RCVMORE)
            v = rcvmore_ ? 1 : 0;
        else if (option == ZMQ_THREAD_SAFE)
            v = 0;  // no thread-safe socket types
        else if (option == ZMQ_FD)
            v = mailbox_.fd();
        else {
            if (process_commands(0) != 0)
                return -1;
            v = (xhas_in() ? ZMQ_POLLIN : 0) | (xhas_out() ? ZMQ_POLLOUT : 0);
        }
        // As libzmq: the rest of a larger buffer is zeroed (an int64 reads 0/1).
        std::memset(val, 0, *len);
        *static_cast<int *>(val) = v;
        *len = sizeof(int);
        return 0;
    }
    if (terminated_) {
        errno = ETERM;
        return -1;
    }
    int rc = xgetsockopt(option, val, len);
    if (rc == 0 || errno != EINVAL)
        return rc;
    return options.get(option, val, len);
}

int socket_base_t::poll_events() {
    if (process_commands(0) != 0)
        return -1;
    return (xhas_in() ? ZMQ_POLLIN : 0) | (xhas_out() ? ZMQ_POLLOUT : 0);
}

int socket_base_t::send(msg_t &msg, int flags) {
    if (!msg.valid()) {
        errno = EFAULT;
        return -1;
    }
    if (process_commands_throttled() != 0)
        return -1;
    msg.reset_flags(msg_t::more);
    if (flags & ZMQ_SNDMORE)
        msg.set_flags(msg_t::more);
    if (xsend(msg) == 0)
        return 0;
    if (errno != EAGAIN)
        return -1;
    if ((flags & ZMQ_DONTWAIT) || options.blocking.sndtimeo == 0) {
        // The burst is over: the caller will wait, poll or read before trying
        // again, so the next send looks at the commands whatever the interval
        // (a drained pipe's credit is never hidden from a retry).
        last_send_check_ = 0;
        errno = EAGAIN;
        return -1;
    }
    // Block until a pipe takes the message (write_activated), the timeout
    // passes, or the context terminates.
    return retry_until(
        options.blocking.sndtimeo, [this](int wait) { return process_commands(wait); },
        [this, &msg] { return xsend(msg); });
}

int socket_base_t::recv(msg_t &msg, int flags) {
    if (!msg.valid()) {
        errno = EFAULT;
        return -1;
    }
    if (process_commands_every_nth_recv() != 0)
        return -1;
    msg.close();
    msg.init();
    // One attempt, and what a received message updates; xrecv's errno on failure.
    auto take = [this, &msg] {
        if (xrecv(msg) != 0)
            return -1;
        rcvmore_ = msg.has_more();
        return 0;
    };
    if (take() == 0)
        return 0;
    if (errno != EAGAIN)
        return -1;
    // Nothing readable: the commands may hold a newly attached or reactivated
    // pipe. Both paths below run them, so the count starts again.
    recv_ticks_ = 0;
    if ((flags & ZMQ_DONTWAIT) || options.blocking.rcvtimeo == 0) {
        if (process_commands(0) != 0)
            return -1;
        return take();
    }
    return retry_until(
        options.blocking.rcvtimeo, [this](int wait) { return process_commands(wait); }, take);
}

// Why recv throttles: libzmq 4.3.5 runs a socket's commands on recv only once
// every 100 calls while messages are readable (inbound_poll_rate), and whenever
// none is. Run on every call, the pipe of a peer's new connection was attached
// at the first recv after it arrived, and fair queueing then alternated between
// it and the old connection's backlog, which libzmq reads to the end first when
// the backlog is under 100 frames: a DEALER reconnecting after a heartbeat
// timeout had its messages delivered out of order by a zlink ROUTER and in order
// by libzmq's (faults soak, issue 44; tests/faults/reconnect_order_test.cpp).
int socket_base_t::process_commands_every_nth_recv() {
    if (++recv_ticks_ >= inbound_poll_rate) {
        recv_ticks_ = 0;
        return process_commands(0);
    }
    if (terminated_) {
        errno = ETERM;
        return -1;
    }
    return 0;
}

// ---- endpoints: through the transport table (core/transport.hpp) ----

// The four endpoint calls share one frame: pending commands first (a socket
// that is closing refuses), the text parsed into an endpoint and its transport,
// the transport's own step, then the ZMQ_FD wake-up below.
template <typename Step>
int socket_base_t::through_transport(const char *text, Step step) {
    if (process_commands(0) != 0)
        return -1;
    endpoint_t ep;
    const transport *tr = nullptr;
    if (parse_endpoint(text, ep, tr) != 0)
        return -1;
    if (step(*tr, ep) != 0)
        return -1;
    signal_endpoint_change(*tr);
    return 0;
}

int socket_base_t::bind(const char *text) {
    std::string resolved;
    if (through_transport(text, [&](const transport &tr, const endpoint_t &ep) {
            return tr.bind(*this, ep, text, resolved);
        }) != 0)
        return -1;
    options.last_endpoint.swap(resolved);  // no allocation: the bind is done
    return 0;
}

int socket_base_t::connect(const char *text) {
    if (through_transport(text, [&](const transport &tr, const endpoint_t &ep) {
            return tr.connect(*this, ep, text);
        }) != 0)
        return -1;
    options.connect_routing_id.clear();  // consumed by this connect
    options.last_endpoint = text;
    return 0;
}

int socket_base_t::unbind(const char *text) {
    return through_transport(text, [&](const transport &tr, const endpoint_t &ep) {
        return tr.unbind(*this, ep, text);
    });
}

int socket_base_t::disconnect(const char *text) {
    return through_transport(text, [&](const transport &tr, const endpoint_t &ep) {
        return tr.disconnect(*this, ep, text);
    });
}

// libzmq's bind/connect/unbind/disconnect on tcp and ipc send the socket
// commands of its own (own, term_ack), so its ZMQ_FD turns readable right
// after them; pollers rely on it (CZMQ's zpoller self-test polls a PULL's
// ZMQ_FD right after zmq_connect and expects a wake-up before any message).
// zlink does that work inline, so it posts a no-op command to the same effect.
void socket_base_t::signal_endpoint_change(const transport &tr) {
    if (!tr.in_process())
        mailbox_.post(command{command_kind::wake, nullptr, this});
}

// Owned before anything else can throw (bad_alloc): from then on close()
// stops the object, so a half-registered endpoint never blocks reaping.
void socket_base_t::add_endpoint(const std::string &text, std::shared_ptr<io_object> obj) {
    if (!owned_.count(obj.get())) {
        owned_.emplace(obj.get(), obj);
        obj->request_start();
    }
    endpoints_.emplace(text, obj);
}

void socket_base_t::add_endpoint_pipe(const std::string &text, pipe_t *pipe) {
    endpoint_pipes_.emplace(text, pipe);
}

int socket_base_t::stop_endpoint(const std::string &text) {
    auto objects = endpoints_.equal_range(text);
    auto pipes = endpoint_pipes_.equal_range(text);
    if (objects.first == objects.second && pipes.first == pipes.second) {
        errno = ENOENT;
        return -1;
    }
    for (auto it = objects.first; it != objects.second; ++it)
        it->second->request_stop(options.linger);
    for (auto it = pipes.first; it != pipes.second; ++it)
        it->second->terminate();
    endpoint_pipes_.erase(pipes.first, pipes.second);
    return 0;
}

// ---- pipes and owned objects ----

void socket_base_t::attach_pipe(pipe_t *pipe, bool locally_initiated) {
    pipe->set_sink(this);
    pipe->set_want_routing_id(options.role.recv_routing_id);
    pipe->locally_initiated = locally_initiated;
    pipes_.insert(pipe);
    if (closing_) {
        pipe->terminate();
        return;
    }
    xattach_pipe(pipe, locally_initiated);
}

void socket_base_t::read_activated(pipe_t *pipe) { xread_activated(pipe); }
void socket_base_t::write_activated(pipe_t *pipe) { xwrite_activated(pipe); }

void socket_base_t::pipe_terminated(pipe_t *pipe) {
    xpipe_terminated(pipe);
    pipes_.erase(pipe);
    for (auto it = endpoint_pipes_.begin(); it != endpoint_pipes_.end();)
        it = it->second == pipe ? endpoint_pipes_.erase(it) : std::next(it);
}

void socket_base_t::hiccuped(pipe_t *pipe) {
    if (pipes_.count(pipe) && !closing_)
        xhiccuped(pipe);
}

void socket_base_t::own(std::shared_ptr<io_object> obj) {
    owned_.emplace(obj.get(), obj);
    if (closing_)
        obj->request_stop(options.linger);
}

void socket_base_t::owned_gone(io_object *obj) {
    owned_.erase(obj);
    for (auto it = endpoints_.begin(); it != endpoints_.end();)
        it = it->second.get() == obj ? endpoints_.erase(it) : std::next(it);
    owned_count.fetch_sub(1, std::memory_order_relaxed);
}

void socket_base_t::stop() { terminated_ = true; }

void socket_base_t::process(const command &c) {
    switch (c.kind) {
    case command_kind::attach_pipe: return attach_pipe(c.pipe, c.value != 0);
    case command_kind::hiccup: return hiccuped(c.pipe);
    case command_kind::own: return own(c.object);
    case command_kind::owned_gone: return owned_gone(c.object.get());
    case command_kind::stop: return stop();
    default: return;
    }
}

// The monitor stays until the socket is reaped (reap_step), so the events of
// closing (a listener's CLOSED, DISCONNECTED) still reach it before
// MONITOR_STOPPED, as in libzmq.
int socket_base_t::close() {
    if (ctx_->forked())
        return 0;  // a socket inherited through fork(): left alone (ctx_t::forked)
    // The handle is dead from now on, as in libzmq, although the reaper frees the
    // object later: a call through it fails with ENOTSOCK at once. pyzmq tells a
    // closed socket that way (a shadow's close seen by its owner: tornado's
    // IOLoop.close(all_fds=True) in pyzmq's test_close_all_fds).
    tag_ = dead_tag;
    closing_ = true;
    // Pipes first: a session must learn that the socket is gone (and drain
    // what it left, within ZMQ_LINGER) before it is asked to stop.  Both
    // commands go to the session's thread in this order.
    std::vector<pipe_t *> ps(pipes_.begin(), pipes_.end());
    for (pipe_t *p : ps)
        p->terminate(pipe_t::term_reason::owner_closing);
    for (auto &o : owned_)
        o.second->request_stop(options.linger);
    ctx_->close_socket(this);
    return 0;
}

bool socket_base_t::reap_step() {
    mailbox_.process();
    if (!pipes_.empty() || owned_count.load(std::memory_order_relaxed) != 0)
        return false;
    std::lock_guard<std::mutex> lock(monitor_mutex_);
    stop_monitor_locked();  // the last event of this socket
    return true;
}

}  // namespace zlink

namespace zlink {

int socket_base_t::monitor(const char *addr, int events) {
    std::lock_guard<std::mutex> lock(monitor_mutex_);
    if (!addr) {
        stop_monitor_locked();
        return 0;
    }
    endpoint_t ep;
    const transport *tr = nullptr;
    if (parse_endpoint(addr, ep, tr) != 0)
        return -1;
    if (!tr->in_process()) {
        errno = EPROTONOSUPPORT;  // as libzmq: monitors speak inproc only
        return -1;
    }
    stop_monitor_locked();
    socket_base_t *m = ctx_->create_socket(ZMQ_PAIR);
    if (!m)
        return -1;
    int rc;
    try {
        int zero = 0;
        m->setsockopt(ZMQ_LINGER, &zero, sizeof zero);
        rc = m->bind(addr);
    } catch (...) {
        m->close();  // a half-made monitor must not keep the context alive
        throw;
    }
    if (rc != 0) {
        int e = errno;
        m->close();
        errno = e;
        return -1;
    }
    monitor_socket_ = m;
    monitor_events_ = events;
    return 0;
}

void socket_base_t::stop_monitor_locked() {
    if (!monitor_socket_)
        return;
    if (monitor_events_ & ZMQ_EVENT_MONITOR_STOPPED)
        send_event_locked(ZMQ_EVENT_MONITOR_STOPPED, 0, "");
    monitor_socket_->close();
    monitor_socket_ = nullptr;
    monitor_events_ = 0;
}

// Events come from IO threads and from the socket's own thread; the monitor
// PAIR socket is used under a lock, as libzmq does.
void socket_base_t::event(int event, int value, const std::string &endpoint) {
    std::lock_guard<std::mutex> lock(monitor_mutex_);
    if (monitor_socket_ && (monitor_events_ & event))
        send_event_locked(event, value, endpoint);
}

void socket_base_t::send_event_locked(int event, int value, const std::string &endpoint) {
    // Frame 1: 16-bit event id + 32-bit value (native byte order); frame 2: endpoint.
    msg_t head;
    head.init_size(6);
    auto *p = static_cast<unsigned char *>(head.data());
    uint16_t ev16 = static_cast<uint16_t>(event);
    uint32_t v32 = static_cast<uint32_t>(value);
    std::memcpy(p, &ev16, 2);
    std::memcpy(p + 2, &v32, 4);
    if (monitor_socket_->send(head, ZMQ_SNDMORE | ZMQ_DONTWAIT) != 0) {
        head.close();
        return;
    }
    msg_t addr;
    addr.init_buffer(endpoint.data(), endpoint.size());
    if (monitor_socket_->send(addr, ZMQ_DONTWAIT) != 0)
        addr.close();
}

}  // namespace zlink
