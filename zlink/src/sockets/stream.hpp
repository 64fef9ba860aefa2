// STREAM (libzmq 4.3.5 zmq_socket(3), ZMQ_STREAM): talks raw bytes to plain
// TCP/IPC peers, without ZMTP. Every message, in and out, is two frames: the
// connection's routing id, then bytes. Ids are generated per connection (or
// set with ZMQ_CONNECT_ROUTING_ID before connecting). With ZMQ_STREAM_NOTIFY
// (on by default) a new connection and a closed one are each announced as the
// id followed by an empty frame. Sending the id and then an empty frame
// closes that connection. A send to an unknown id fails with EHOSTUNREACH; to
// a connection whose queue is full, it blocks or fails with EAGAIN.
#pragma once

#include "core/socket_base.hpp"
#include "sockets/policy/fair_queue.hpp"
#include "sockets/policy/routing_table.hpp"

namespace zlink {

class stream_t : public socket_base_t {
public:
    explicit stream_t(ctx_t *ctx);
    ~stream_t() override;

protected:
    void xattach_pipe(pipe_t *pipe, bool locally_initiated) override;
    int xsend(msg_t &msg) override;
    int xrecv(msg_t &msg) override;
    bool xhas_in() override;
    bool xhas_out() override;
    void xread_activated(pipe_t *pipe) override;
    void xwrite_activated(pipe_t *pipe) override;
    void xpipe_terminated(pipe_t *pipe) override;
    int xsetsockopt(int option, const void *val, size_t len) override;

private:
    bool prefetch();

    fair_queue<pipe_t> fq_;
    routing_table<pipe_t> table_;
    msg_t prefetched_;
    std::string prefetched_id_;
    bool has_prefetched_ = false;
    bool id_sent_ = false;
    pipe_t *current_out_ = nullptr;
    bool more_out_ = false;
};

}  // namespace zlink
