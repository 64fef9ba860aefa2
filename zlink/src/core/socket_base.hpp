// socket_base_t: what every socket type shares, and the hooks it implements.
//
// A socket lives on the application thread that calls zmq_* on it.  Its pipes
// (one per peer: a session for tcp/ipc, another socket for inproc) report
// activity as commands in the socket's mailbox, which run inside zmq_* calls
// (send, recv, getsockopt(ZMQ_EVENTS), zmq_poll).  A socket type only sees
// pipes and messages; it never sees transports, threads or Asio.
//
// Hooks (all called on the socket's thread):
//   xattach_pipe(pipe, locally_initiated)  a new peer pipe; take it into the
//        routing policy.  locally_initiated: this socket connected.
//        pipe->peer_routing_id holds the Identity the peer announced (ZMTP
//        READY, or the inproc connecter's ZMQ_ROUTING_ID), possibly empty;
//        no routing-id message is ever put into the pipe.  When
//        options.role.recv_routing_id is set (ROUTER/STREAM set it in their
//        constructor) connect-side pipes are attached only after the
//        handshake, so peer_routing_id is always final at attach time, and
//        every new connection (also a reconnect) arrives as a new pipe.
//        Other types keep one pipe per connect endpoint across reconnects
//        (messages queue before the first connection) and get xhiccuped()
//        after each reconnect (SUB/XSUB resend subscriptions there).
//        STREAM (options.role.raw_socket) pipes carry raw bytes; with raw_notify
//        an empty message arrives first (connect) and last (disconnect);
//        an empty message written to the pipe closes the connection.
//   xsend(msg)   route one frame (msg.has_more() tells if more follow).
//        Return 0 when taken (leave msg empty via init()), or -1 with errno:
//        EAGAIN when no pipe can take it now (the caller blocks/retries
//        after write_activated), EHOSTUNREACH, ENOTSUP, EFSM...
//   xrecv(msg)   fetch one frame into msg (msg is empty on entry; set the
//        more flag as read from the pipe).  -1/EAGAIN when none available.
//   xhas_in / xhas_out   for ZMQ_EVENTS and zmq_poll.
//   xread_activated / xwrite_activated(pipe)   the pipe became readable /
//        writable again.
//   xpipe_terminated(pipe)   forget the pipe; it is freed right after.
//   xsetsockopt / xgetsockopt   type-specific options; return -1/EINVAL for
//        options they do not handle (the base then tries the generic ones).
// Subscriptions travel in pipes in message form: body \x01+topic (subscribe)
// or \x00+topic (cancel), one frame; the engine converts to/from ZMTP 3.1
// SUBSCRIBE/CANCEL commands for SUB/XSUB sockets.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/command.hpp"
#include "core/mailbox.hpp"
#include "core/msg.hpp"
#include "core/options.hpp"
#include "core/pipe.hpp"

namespace zlink {

class ctx_t;
class io_object;
class transport;

class socket_base_t : public pipe_events {
    static constexpr unsigned live_tag = 0x2a11feed, dead_tag = 0xdeadbeef;

public:
    // From the socket type table (core/socket_registry.hpp): null with errno
    // EINVAL for an unsupported type, ENOMEM when allocation fails.
    static socket_base_t *create(int type, ctx_t *ctx);
    ~socket_base_t() override;

    // ---- C API entry points (application thread) ----
    int setsockopt(int option, const void *val, size_t len);
    int getsockopt(int option, void *val, size_t *len);
    int bind(const char *endpoint);
    int connect(const char *endpoint);
    int unbind(const char *endpoint);
    int disconnect(const char *endpoint);
    int send(msg_t &msg, int flags);
    int recv(msg_t &msg, int flags);
    int close();  // hands the socket to the reaper; do not touch it afterwards
    // Whether a handle from the C API is a live socket. It may be a foreign pointer
    // (a context passed as a socket), so the tag is read without UBSan's dynamic
    // type check, which would otherwise report the very mistake this detects.
    __attribute__((no_sanitize("vptr"))) static bool is_live(const void *handle) {
        return handle && static_cast<const socket_base_t *>(handle)->tag_ == live_tag;
    }
    // For zmq_poll: processes pending commands, then reports ZMQ_POLLIN/OUT.
    int poll_events();
    int fd() const { return mailbox_.fd(); }
    int monitor(const char *endpoint, int events);

    // ---- used by ctx, transports and the reaper ----
    ctx_t *ctx() const { return ctx_; }
    mailbox &commands() { return mailbox_; }
    const options_t &opts() const { return options; }
    // Runs a socket command (core/command.hpp) on this socket's thread.
    void process(const command &c);
    // Attaches a pipe end created elsewhere (runs on this socket's thread).
    void attach_pipe(pipe_t *pipe, bool locally_initiated);
    // Transports record what bind/connect created under the endpoint text
    // (and, for bind, the resolved text): an IO object, which the socket
    // then owns and starts, or the socket's end of an inproc pipe.
    void add_endpoint(const std::string &text, std::shared_ptr<io_object> obj);
    void add_endpoint_pipe(const std::string &text, pipe_t *pipe);
    // unbind/disconnect: stops the IO objects and terminates the pipes
    // recorded under text.  -1/ENOENT when there are none.
    int stop_endpoint(const std::string &text);
    // IO objects this socket owns (listeners, sessions) announce themselves
    // and their end; the socket lives until all are gone.
    void own(std::shared_ptr<io_object> obj);
    void owned_gone(io_object *obj);
    std::atomic<int> owned_count{0};
    void hiccuped(pipe_t *pipe);  // a persistent pipe's peer reconnected
    void stop();                  // ctx_term: blocking calls now fail with ETERM
    // Monitor events (from any thread: queued to the socket's thread).
    void event(int event, int value, const std::string &endpoint);
    bool reap_step();  // reaper: process commands; true when fully closed

    // pipe_events (dispatch to the hooks)
    void read_activated(pipe_t *pipe) final;
    void write_activated(pipe_t *pipe) final;
    void pipe_terminated(pipe_t *pipe) final;

protected:
    socket_base_t(ctx_t *ctx, int type);

    virtual void xattach_pipe(pipe_t *pipe, bool locally_initiated) = 0;
    virtual int xsend(msg_t &msg) = 0;
    virtual int xrecv(msg_t &msg) = 0;
    virtual bool xhas_in() = 0;
    virtual bool xhas_out() = 0;
    virtual void xread_activated(pipe_t *pipe) = 0;
    virtual void xwrite_activated(pipe_t *pipe) = 0;
    virtual void xpipe_terminated(pipe_t *pipe) = 0;
    virtual void xhiccuped(pipe_t *) {}
    virtual int xsetsockopt(int option, const void *val, size_t len);
    virtual int xgetsockopt(int option, void *val, size_t *len);

private:
    // First data member: a foreign pointer passed as a socket (a context, a
    // timer set) is then read within its own bounds when the tag is checked.
    unsigned tag_ = live_tag;

protected:
    options_t options;

private:
    // Runs pending commands; with timeout_ms != 0 first waits for one.
    // Returns -1/ETERM once the context is terminating.
    int process_commands(int timeout_ms);
    // send()'s variant: runs pending commands at most once per ~1 ms (see .cpp).
    int process_commands_throttled();
    // recv()'s variant: every inbound_poll_rate-th call while messages flow (see .cpp).
    int process_commands_every_nth_recv();
    static constexpr int inbound_poll_rate = 100;  // libzmq 4.3.5's config.hpp value
    // Makes ZMQ_FD readable after an endpoint change, as in libzmq (see .cpp).
    void signal_endpoint_change(const transport &tr);
    template <typename Step>
    int through_transport(const char *text, Step step);

    ctx_t *ctx_;
    mailbox mailbox_;
    std::set<pipe_t *> pipes_;
    std::multimap<std::string, std::shared_ptr<io_object>> endpoints_;
    // Keeps IO objects alive until they report finished (owned_gone).
    std::map<io_object *, std::shared_ptr<io_object>> owned_;
    std::multimap<std::string, pipe_t *> endpoint_pipes_;
    bool rcvmore_ = false;
    bool closing_ = false;
    bool terminated_ = false;       // ctx_term seen
    uint64_t last_send_check_ = 0;  // ticks_now() of send's last command run
    int recv_ticks_ = 0;            // recv calls since commands last ran
    // monitor
    void stop_monitor_locked();
    void send_event_locked(int event, int value, const std::string &endpoint);
    std::mutex monitor_mutex_;
    socket_base_t *monitor_socket_ = nullptr;
    int monitor_events_ = 0;
    friend class ctx_t;
};

}  // namespace zlink
