#include "core/pipe.hpp"

#include <sched.h>

#include <algorithm>

#include "core/executor.hpp"

namespace zlink {

namespace {
// With no HWM, a writer whose reader shares its core can queue without bound: the
// application thread fills 256 KiB blocks faster than its IO thread writes them out,
// so every block is fresh memory (faulted in and zeroed: 24-26 page faults per
// 256 KiB message) and is sent from DRAM, not cache. Once this many bytes were
// written while the reader never ran dry, the writer yields its core once. The
// HWM's meaning is unchanged: nothing blocks, and a reader on another core (or none
// runnable) costs one sched_yield per MiB. docs/profiling/2026-11-24-run-ahead.md.
constexpr size_t run_ahead_limit = 1u << 20;
// Report read progress at most every 1024 messages, or at half the HWM for
// small HWMs, so the writer resumes before the queue runs dry.
constexpr int max_wm_delta = 1024;
}  // namespace

// The reader reports every lwm reads (see read()), so lwm is an interval: it
// must stay well below the HWM. (It was hwm - 1024 for HWMs above 2048: a
// reader that had drained 9999 of 11024 never reported, and the writer saw
// only 1025 free slots - libzmq's test_hwm_pubsub test_reset_hwm.)
int pipe_t::compute_lwm(int hwm) {
    if (hwm <= 0)
        return 0;
    return std::min(max_wm_delta, (hwm + 1) / 2);
}

pipe_t::pair_t pipe_t::create_pair(executor *exec_a, executor *exec_b, int hwm_ab, int hwm_ba,
                                   bool conflate_ab, bool conflate_ba) {
    auto *ab = new msg_queue(conflate_ab);
    auto *ba = new msg_queue(conflate_ba);
    // One slot: nothing to limit.
    if (conflate_ab)
        hwm_ab = 0;
    if (conflate_ba)
        hwm_ba = 0;
    auto *a = new pipe_t;
    auto *b = new pipe_t;
    auto *refs = new std::atomic<int>(2);
    a->in_ = ba;
    a->out_ = ab;
    b->in_ = ab;
    b->out_ = ba;
    a->peer_ = b;
    b->peer_ = a;
    a->exec_ = exec_a;
    b->exec_ = exec_b;
    a->pair_refs_ = b->pair_refs_ = refs;
    a->hwm_ = hwm_ab;
    b->lwm_ = compute_lwm(hwm_ab);
    b->hwm_ = hwm_ba;
    a->lwm_ = compute_lwm(hwm_ba);
    return {a, b};
}

void pipe_t::share_direct_send(pair_t pair) {
    auto d = std::make_shared<direct_send>();
    pair.a->direct_ = d;
    pair.a->writes_direct_ = true;
    pair.b->direct_ = std::move(d);
}

void pipe_t::discard_unused_pair(pipe_t *end) {
    delete end->pair_refs_;
    delete end->in_;
    delete end->out_;
    delete end->peer_;
    delete end;
}

// Commands to the peer end run on the peer's thread (see core/command.hpp).
void pipe_t::send_to_peer(command_kind kind, uint64_t value) {
    peer_->exec_->post(command{kind, peer_, nullptr, nullptr, value});
}
void pipe_t::send_to_self(command_kind kind) { exec_->post(command{kind, this}); }

void pipe_t::set_hwms_after_bind(int hwm_out, int hwm_in) {
    apply_hwms(hwm_out, hwm_in);
    // What we read the peer writes, and the reverse.
    const uint64_t peer_out = static_cast<uint32_t>(hwm_in),
                   peer_in = static_cast<uint32_t>(hwm_out);
    send_to_peer(command_kind::pipe_hwms, peer_out << 32 | peer_in);
}

void pipe_t::set_peer_hwms(int peer_rcvhwm, int peer_sndhwm) {
    peer_share_.rcvhwm.store(peer_rcvhwm, std::memory_order_relaxed);
    peer_share_.sndhwm.store(peer_sndhwm, std::memory_order_relaxed);
}

namespace {
// Own limit plus the peer's share; unlimited when either is (as inproc's
// connect). No share known (-1): the own limit alone.
int with_peer_share(int own, int peer) {
    if (peer < 0)
        return own;
    return (own == 0 || peer == 0) ? 0 : own + peer;
}
}  // namespace

void pipe_t::update_hwms(int sndhwm, int rcvhwm) {
    if (term_.state != st_active)
        return;  // closing: the peer may be gone, and limits no longer matter
    set_hwms_after_bind(
        with_peer_share(sndhwm, peer_share_.rcvhwm.load(std::memory_order_relaxed)),
        with_peer_share(rcvhwm, peer_share_.sndhwm.load(std::memory_order_relaxed)));
}

void pipe_t::apply_hwms(int hwm_out, int hwm_in) {
    hwm_ = out_->conflating() ? 0 : hwm_out;
    lwm_ = in_->conflating() ? 0 : compute_lwm(hwm_in);
    // A writer stopped at the old limit may go on now.
    if (!out_active_ && term_.state == st_active && !full()) {
        out_active_ = true;
        if (sink_)
            sink_->write_activated(this);
    }
}

void pipe_t::send_activate_read() { send_to_peer(command_kind::activate_read); }
void pipe_t::send_activate_write() { send_to_peer(command_kind::activate_write, msgs_read_); }
void pipe_t::send_term(term_reason why) {
    send_to_peer(command_kind::pipe_term, static_cast<uint64_t>(why));
}
void pipe_t::send_term_ack() { send_to_peer(command_kind::pipe_term_ack); }

void pipe_t::process(const command &c) {
    switch (c.kind) {
    case command_kind::activate_read: return process_activate_read();
    case command_kind::activate_write: return process_activate_write(c.value);
    case command_kind::pipe_term: return process_term(static_cast<term_reason>(c.value));
    case command_kind::pipe_term_ack: return process_term_ack();
    case command_kind::pipe_hwms:
        return apply_hwms(static_cast<int>(c.value >> 32), static_cast<int>(c.value & 0xffffffffu));
    case command_kind::pipe_drained:
        if (term_.state == st_draining)
            finish_passive();
        return;
    case command_kind::pipe_report:
        if (sink_)
            sink_->pipe_terminated(this);
        return release();
    default: return;
    }
}

bool pipe_t::check_read() {
    if (!in_active_ || (term_.state != st_active && term_.state != st_draining))
        return false;
    if (!in_->check_read()) {
        in_active_ = false;
        return false;
    }
    if ((in_->front().flags() & msg_t::routing_id) && !want_routing_id_) {
        // The peer's id is not a message for this socket type: drop it.
        msg_t id;
        in_->read(id);
        id.close();
        return check_read();
    }
    if (in_->front().is_delimiter()) {
        msg_t d;
        in_->read(d);
        on_delimiter();
        return false;
    }
    return true;
}

bool pipe_t::read(msg_t &msg) {
    if (!check_read())
        return false;
    in_->read(msg);
    if (!msg.has_more() && !(msg.flags() & msg_t::routing_id)) {  // ids are not counted
        ++msgs_read_;
        if (lwm_ > 0 && msgs_read_ % static_cast<uint64_t>(lwm_) == 0)
            send_activate_write();
    }
    return true;
}

bool pipe_t::check_write() {
    if (!out_active_ || term_.state != st_active)
        return false;
    if (full()) {
        out_active_ = false;
        return false;
    }
    return true;
}

bool pipe_t::write(msg_t &msg) {
    if (!check_write())
        return false;
    if (writes_direct_ && !msg.has_more() && write_direct(msg))
        return true;
    const bool more = msg.has_more();
    const bool counted = !more && !(msg.flags() & msg_t::routing_id);
    bytes_ahead_ += msg.size();
    out_->write(msg, more);
    msg.init();  // ownership moved into the pipe
    if (counted)
        ++msgs_written_;
    return true;
}

// Straight to the connection (core/direct_send.hpp), with the frames of this
// message staged before it (a last frame of at least min_bytes: REQ/REP's body
// follows their delimiter), only when nothing queued before the message is still
// in the pipe (I's idle() covers what it took out).  Not counted for the HWM: the
// reader never sees it.  false: nothing changed, queue msg as usual.
bool pipe_t::write_direct(msg_t &msg) {
    // The size first: small messages (most of them) pay one comparison, not a
    // look at the reader's cache line (that cost 64 B streams 3% in split).
    if (msg.size() < direct_send::min_bytes)
        return false;
    const std::uint64_t staged = out_->staged();
    if (staged + 1 > direct_send::max_frames || !direct_send::candidate_frame(msg) ||
        !out_->drained_before_staged())
        return false;
    msg_t frames[direct_send::max_frames];
    const std::size_t count = static_cast<std::size_t>(staged) + 1;
    frames[count - 1] = msg;
    for (std::size_t i = count - 1; i-- > 0;)
        out_->unwrite(frames[i]);  // the last staged first
    bool ok = true;
    for (std::size_t i = 0; ok && i + 1 < count; ++i)
        ok = direct_send::candidate_frame(frames[i]);
    if (ok && direct_->try_send(frames, count)) {
        msg.init();  // frames[count - 1] was it, now sent
        return true;
    }
    for (std::size_t i = 0; i + 1 < count; ++i)
        out_->write(frames[i], true);  // back as they were
    return false;
}

void pipe_t::rollback() {
    msg_t m;
    while (out_->unwrite(m))
        m.close();
}

void pipe_t::write_routing_id(const std::string &id) {
    msg_t m;
    m.init_buffer(id.data(), id.size());
    m.set_flags(msg_t::routing_id);
    write(m);
    flush();
}

void pipe_t::flush(wake when) {
    if (term_.state == st_done)
        return;
    if (!out_->flush()) {
        read_wake_owed_ = true;  // the reader is asleep: one activate_read per sleep
        bytes_ahead_ = 0;        // the reader had run dry: it is keeping up
    } else if (bytes_ahead_ > run_ahead_limit) {
        bytes_ahead_ = 0;
        if (hwm_ == 0 && !out_->conflating())
            sched_yield();
    }
    if (read_wake_owed_ && when == wake::now) {
        read_wake_owed_ = false;
        send_activate_read();
    }
}

void pipe_t::terminate(term_reason why) {
    if (term_.state == st_active) {
        term_.state = st_term_sent;
        rollback();
        msg_t d;
        d.init_delimiter();
        out_->write(d, false);
        out_->flush();  // the term command below wakes the peer anyway
        read_wake_owed_ = false;
        send_term(why);
    } else if (term_.state == st_draining) {
        // Owner gives up on the unread rest: acknowledge now, report later
        // (never call back into the sink from inside its own call).
        term_.state = st_done;
        send_term_ack();
        send_to_self(command_kind::pipe_report);
    }
}

void pipe_t::process_activate_read() {
    if (in_active_ || (term_.state != st_active && term_.state != st_draining))
        return;
    in_active_ = true;
    if (sink_)
        sink_->read_activated(this);
}

void pipe_t::process_activate_write(uint64_t msgs_read) {
    peers_msgs_read_ = msgs_read;
    if (!out_active_ && term_.state == st_active) {
        out_active_ = true;
        if (sink_)
            sink_->write_activated(this);
    }
}

void pipe_t::process_term(term_reason why) {
    term_.peer_owner_closing = why == term_reason::owner_closing;
    if (term_.state == st_active) {
        if (term_.delimiter_seen || !term_.delay) {
            finish_passive();
            return;
        }
        // Let the owner read what the peer wrote before it left.
        term_.state = st_draining;
        if (!in_active_) {
            in_active_ = true;
            if (sink_)
                sink_->read_activated(this);
        }
    } else if (term_.state == st_term_sent) {
        send_term_ack();  // both ends closed at once; still wait for our ack
    }
}

void pipe_t::on_delimiter() {
    term_.delimiter_seen = true;
    in_active_ = false;
    if (term_.state == st_draining)
        send_to_self(command_kind::pipe_drained);  // finish outside the sink's read()
}

void pipe_t::finish_passive() {
    term_.state = st_done;
    send_term_ack();
    if (sink_)
        sink_->pipe_terminated(this);
    release();
}

void pipe_t::process_term_ack() {
    if (term_.state != st_term_sent)
        return;
    term_.state = st_done;
    if (sink_)
        sink_->pipe_terminated(this);
    release();
}

void pipe_t::release() {
    // Both ends done: nobody will post to either end again; free the pair.
    if (pair_refs_->fetch_sub(1, std::memory_order_acq_rel) != 1)
        return;
    delete pair_refs_;
    delete in_;
    delete out_;
    delete peer_;
    delete this;
}

}  // namespace zlink
