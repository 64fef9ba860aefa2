// pipe_t: one end of a bidirectional message pipe between two threads.
//
// A pipe pair joins a socket (application thread) to a session (IO thread) or,
// for inproc, two sockets.  Each direction is a lock-free ypipe (or, for
// ZMQ_CONFLATE, a one-slot queue: see core/msg_queue.hpp).  The end's
// owner ("sink") implements pipe_events and is told, on its own thread:
//   read_activated   - the pipe was empty (read/check_read returned false)
//                      and now has a complete message;
//   write_activated  - the pipe was full (write/check_write returned false,
//                      HWM reached) and the peer has read enough to go on;
//   pipe_terminated  - the pipe is finished; exactly once per end, after
//                      which the sink must drop the pointer (it is freed).
//
// Contract for the owner (single thread, the sink's):
//   read(msg)        false if no complete message is available (then wait
//                    for read_activated).  Messages of one multipart message
//                    are all readable once the first is.
//   check_write()    false if the HWM is reached (then wait for write_activated)
//   write(msg)       false if full (msg untouched); on success msg is moved
//                    from (left empty).  Nothing is visible before flush().
//   flush()          publishes written messages and wakes the peer if needed;
//                    with no HWM, yields the core after 1 MiB queued ahead of a
//                    reader that never ran dry.
//   flush(wake::later)  publishes, but a wake-up the reader is owed waits for
//                    the next flush() (or terminate()): a writer that knows
//                    more is coming at once (an IO thread in the middle of a
//                    run of full reads) wakes its reader once for the run.
//   rollback()       drops frames of an unfinished multipart message.
//   terminate()      start closing; the peer still receives everything written
//                    before (a delimiter marks the end), then both ends get
//                    pipe_terminated.  Do not read or write after terminate().
// HWM counts whole messages (frames with MORE are not counted); 0 = unlimited.
// Routing ids: the peer side writes its routing id (ZMTP Identity, inproc
// ZMQ_ROUTING_ID; possibly empty) as the first message of every new pipe,
// flagged msg_t::routing_id.  read() hands it over only when the sink asked
// for it (set_want_routing_id, done by socket_base for recv_routing_id
// sockets); otherwise it is dropped silently.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "core/command.hpp"
#include "core/direct_send.hpp"
#include "core/msg.hpp"
#include "core/msg_queue.hpp"

namespace zlink {

class executor;
class pipe_t;

class pipe_events {
public:
    virtual ~pipe_events() = default;
    virtual void read_activated(pipe_t *pipe) = 0;
    virtual void write_activated(pipe_t *pipe) = 0;
    virtual void pipe_terminated(pipe_t *pipe) = 0;
};

class pipe_t {
public:
    struct pair_t {
        pipe_t *a;
        pipe_t *b;
    };
    // hwm_ab limits messages queued from a to b; hwm_ba the reverse.
    // exec_a / exec_b run commands for the thread owning each end.
    // conflate_ab / conflate_ba: that direction keeps only the newest
    // message (ZMQ_CONFLATE; its HWM does not apply).
    static pair_t create_pair(executor *exec_a, executor *exec_b, int hwm_ab, int hwm_ba,
                              bool conflate_ab = false, bool conflate_ba = false);
    // Frees a pair neither of whose ends was ever used or handed out.
    static void discard_unused_pair(pipe_t *either_end);

    // Must be called on the owning thread before the end is used.
    void set_sink(pipe_events *sink) { sink_ = sink; }
    pipe_events *sink() const { return sink_; }
    // Without delay, a peer's terminate() finishes this end at once and drops
    // unread messages (for sinks that never read, e.g. inbound side of PUB).
    void set_nodelay() { term_.delay = false; }
    void set_want_routing_id(bool on) { want_routing_id_ = on; }

    bool check_read();
    bool read(msg_t &msg);
    bool check_write();
    // HWM probe without side effects (no write_activated is owed afterwards).
    bool check_hwm() const { return !full(); }
    // A large message may go straight to the connection instead of into the pipe
    // (share_direct_send, core/direct_send.hpp); write() then returns true as well.
    bool write(msg_t &msg);
    void rollback();
    enum class wake : std::uint8_t { now, later };
    void flush(wake when = wake::now);
    // Writes and flushes `id` as this side's routing id (the first message of a
    // new pipe written by an in-process peer, see the header comment).
    void write_routing_id(const std::string &id);
    // Why an end is terminated; its peer learns it with the pipe_term command.
    // owner_closing: the owner is in zmq_close, which stops the owner's IO
    // objects (sessions) right after ending its pipes, so a session whose pipe
    // ends this way waits for that stop instead of taking it for a refusal.
    enum class term_reason : std::uint8_t { dropped, owner_closing };
    void terminate(term_reason why = term_reason::dropped);
    // Whether the peer ended the pipe because its owner is closing (valid
    // from the peer's pipe_term on, e.g. inside pipe_terminated).
    bool peer_owner_closing() const { return term_.peer_owner_closing; }
    bool is_active() const { return term_.state == st_active; }
    // The other end, as an identity only (never call into it: other thread).
    pipe_t *peer() const { return peer_; }
    // Runs a pipe command (core/command.hpp) on this end's thread.
    void process(const command &c);
    // Inproc connect before bind: the pair was made with the connecter's HWMs
    // only; once the binder is known both ends take the sums (as libzmq's
    // set_hwms). Call on the binder's end before it is attached; the other
    // end learns its share by a command. A conflated direction stays unlimited.
    void set_hwms_after_bind(int hwm_out, int hwm_in);
    // Inproc: the peer socket's share of each direction (libzmq's HWM boost),
    // kept so a later SNDHWM/RCVHWM change keeps it. Atomic: the binder sets
    // it on the connecter's end too. A session pipe has none (-1).
    void set_peer_hwms(int peer_rcvhwm, int peer_sndhwm);
    // The owning socket's SNDHWM/RCVHWM changed: both directions take the new
    // limits (plus the peer's share), this end at once, the peer by command.
    void update_hwms(int sndhwm, int rcvhwm);

    // A session's pipe: end a (the socket's) may write large messages to the
    // connection itself (core/direct_send.hpp); end b's owner (the session) hands
    // the object to its engine (direct()).  Before either end is handed over.
    static void share_direct_send(pair_t pair);
    const std::shared_ptr<direct_send> &direct() const { return direct_; }

    // Data the socket layer attaches to an end.
    std::string routing_id;          // ROUTER/STREAM: id this socket uses for the peer
    std::string peer_routing_id;     // Identity the peer announced (READY / inproc)
    int peer_socket_type = -1;       // from the handshake; -1 unknown
    bool locally_initiated = false;  // this side connected (vs accepted)
    bool probed = false;             // PROBE_ROUTER: the session already sent the empty message
    void *user = nullptr;            // free slot for the owning socket type

private:
    pipe_t() = default;
    ~pipe_t() = default;
    enum state_t { st_active, st_term_sent, st_draining, st_done };

    void send_to_peer(command_kind kind, uint64_t value = 0);
    void apply_hwms(int hwm_out, int hwm_in);
    void send_to_self(command_kind kind);
    void send_activate_read();
    void send_activate_write();
    void send_term(term_reason why);
    void send_term_ack();
    void process_activate_read();
    void process_activate_write(uint64_t msgs_read);
    void process_term(term_reason why);
    void process_term_ack();
    void finish_passive();
    void on_delimiter();
    void release();
    static int compute_lwm(int hwm);
    bool write_direct(msg_t &msg);
    bool full() const {
        return hwm_ > 0 && msgs_written_ - peers_msgs_read_ >= static_cast<uint64_t>(hwm_);
    }

    msg_queue *in_ = nullptr;
    msg_queue *out_ = nullptr;
    pipe_t *peer_ = nullptr;
    executor *exec_ = nullptr;  // this end's owning thread
    pipe_events *sink_ = nullptr;
    std::atomic<int> *pair_refs_ = nullptr;

    // The end's shutdown: where terminate() / pipe_term have got to and what
    // decides whether unread messages are still delivered (process_term).
    struct termination {
        state_t state = st_active;
        bool delimiter_seen = false;      // the peer's last message was read
        bool peer_owner_closing = false;  // see peer_owner_closing()
        bool delay = true;                // false: set_nodelay, drop unread at once
    };
    // Inproc only: the peer socket's HWM share (set_peer_hwms); atomic because
    // the binder writes it on the connecter's end from another thread.
    struct peer_hwm_share {
        std::atomic<int> rcvhwm{-1};
        std::atomic<int> sndhwm{-1};
    };

    bool in_active_ = true;
    bool out_active_ = true;
    bool want_routing_id_ = false;
    termination term_;
    int hwm_ = 0;  // outbound
    int lwm_ = 0;  // inbound: report progress to the writer every lwm_ reads
    peer_hwm_share peer_share_;
    uint64_t msgs_read_ = 0;
    uint64_t msgs_written_ = 0;
    uint64_t peers_msgs_read_ = 0;
    size_t bytes_ahead_ = 0;               // written since the reader last ran dry (see flush)
    bool read_wake_owed_ = false;          // flush(wake::later) found the reader asleep
    std::shared_ptr<direct_send> direct_;  // see share_direct_send
    bool writes_direct_ = false;
};

}  // namespace zlink
