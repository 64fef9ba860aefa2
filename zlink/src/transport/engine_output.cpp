#include "transport/engine_output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <asio/post.hpp>
#include <asio/write.hpp>

#include "transport/engine.hpp"
#include "transport/write_cap.hpp"
#include "wire/error.hpp"
#include "zmq.h"

namespace zlink {

namespace {
// Output batches written in one go before the engine lets other work run.
constexpr int batches_per_turn = 16;

std::span<const uint8_t> bytes_of(const msg_t &m) {
    return {static_cast<const uint8_t *>(m.data()), m.size()};
}

}  // namespace

engine_output::engine_output(engine_t &engine, const options_t &opts)
    : e_(engine), enc_(engine_t::batch_bytes(opts.batch.out)),
      out_size_(engine_t::batch_bytes(opts.batch.out),
                engine_t::batch_bytes(opts.batch.out_ceiling), batch_size::start::at_ceiling),
      write_wait_fd_(engine.sock_.get_executor()) {}

// An engine dropped without terminate() (the context ending) must not leave the
// application a descriptor that may be reused.
engine_output::~engine_output() {
    detach_direct();
    release_in_flight();
}

void engine_output::queue_pong(std::span<const std::uint8_t> context) {
    if (pongs_.size() == max_pending_pongs)
        pongs_.pop_front();
    pongs_.emplace_back(reinterpret_cast<const char *>(context.data()), context.size());
}

// After batches_per_turn batches it yields (the rest goes out on the next turn
// of the io_context), so a busy sender cannot keep this thread from reading or
// from its other connections.
void engine_output::pump() {
    if (e_.ready() && !e_.stopped())
        sync_direct();
    if (direct_ && write_ == write_state::idle && !claim_direct())
        return;  // the rest of the application's write waits for writability
    for (int batches = 0; write_ == write_state::idle && !e_.stopped(); ++batches) {
        if (e_.hs_ && !e_.hs_->outgoing().empty())
            return write_handshake();
        if (!e_.ready())
            return;
        if (batches == batches_per_turn)
            return yield();
        more_waiting_ = false;
        if (!fill_batch()) {
            drop_write_waiter();  // idle: no write interest left behind (wait_writable())
            if (close_after_flush_ && !e_.stopped())
                return e_.stop(engine_end{true, 0, 0, true, "closed after flush"});
            if (direct_) {
                arm_drain_wake();  // its batches may all be the application's now
                direct_->now_idle();
            }
            return;
        }
        first_write_pending_ = true;
        pause_after_first_ = pause_for_peer();
        arm_drain_wake();
        write_batch();
    }
}

void engine_output::write_handshake() {
    auto out = e_.hs_->outgoing();
    write_ = write_state::handshake;
    asio::async_write(e_.sock_, asio::buffer(out.data(), out.size()),
                      [self = e_.shared_from_this()](const asio::error_code &ec, size_t n) {
                          self->output_.write_ = write_state::idle;
                          if (self->stopped())
                              return;
                          if (ec)
                              return self->write_failed();
                          self->handshake_written(n);
                      });
}

// Pulls frames into the encoder until the batch holds out_size_.now()
// bytes (copied or referenced) or the host has none.  Counting referenced
// bodies too matters: an engine that drained the pipe into one huge gather
// list would leave it empty, so the pipe's reader (us) would be asleep at
// every send and each zmq_send would have to wake this thread (measured at
// 256 KiB: one extra context switch per message).  A batch of about one
// large message lets the sender queue the next ones while this one is written.
bool engine_output::fill_batch() {
    if (e_.raw_)
        return fill_raw_batch();
    // The staging run is empty here (the last batch is written); no-op if unchanged.
    enc_.resize_staging(out_size_.now());
    batch_limit_ = out_size_.now();  // add_sealed may raise it for large sealed frames
    add_heartbeats();
    size_t frames = 0;
    bool full = false;
    msg_t m;
    while (!e_.stopped() && e_.host_->pull_frame(m)) {
        if (!add_frame(m)) {
            e_.host_->return_frame(m);  // first of the next batch
            more_waiting_ = true;
            full = true;
            break;
        }
        ++frames;
        if (enc_.pending_bytes() + sealed_.size() >= batch_limit_) {
            full = true;
            if (first_write_depends_on_more(e_.opts_.batch.first_write,
                                            enc_.pending_bytes() + sealed_.size()))
                more_waiting_ = host_has_frame();
            break;
        }
    }
    if (e_.stopped() || (enc_.empty() && sealed_.empty())) {
        release_in_flight();
        return false;
    }
    out_size_.observe(enc_.pending_bytes() + sealed_.size(), frames, full);
    gather_.clear();
    for (const auto &b : enc_.buffers())
        gather_.add(b.data, b.size);
    gather_.add(sealed_.data(), sealed_.size());
    return true;
}

// STREAM: message bodies go out as they are; an empty message closes.
bool engine_output::fill_raw_batch() {
    size_t bytes = 0;
    msg_t m;
    while (!close_after_flush_ && bytes < out_size_.now() && e_.host_->pull_frame(m)) {
        if (m.size() == 0) {
            m.close();
            close_after_flush_ = true;
            break;
        }
        bytes += m.size();
        in_flight_.push_back(m);
        m.init();
    }
    if (!close_after_flush_ && bytes >= out_size_.now() &&
        first_write_depends_on_more(e_.opts_.batch.first_write, bytes))
        more_waiting_ = host_has_frame();
    gather_.clear();
    for (auto &f : in_flight_)
        gather_.add(f.data(), f.size());
    return !in_flight_.empty();
}

void engine_output::add_heartbeats() {
    if (pongs_.empty() && !ping_due_)
        return;  // every batch asks; almost none has a PING or PONG to carry
    // TTL travels in deciseconds, 16 bits: cap like libzmq instead of wrapping.
    const int ttl_ds = std::min(e_.opts_.liveness.heartbeat_ttl / 100, 65535);
    if (e_.tf_)
        return add_sealed_heartbeats(static_cast<uint16_t>(ttl_ds));
    while (!pongs_.empty() &&
           enc_.add_pong(
               {reinterpret_cast<const uint8_t *>(pongs_.front().data()), pongs_.front().size()}))
        pongs_.pop_front();
    if (ping_due_ && enc_.add_ping(static_cast<uint16_t>(ttl_ds), {}))
        ping_due_ = false;
}

// Transform path: PING/PONG go inside protected frames with the command bit, as
// libzmq sends them over CURVE.
void engine_output::add_sealed_heartbeats(uint16_t ttl_ds) {
    while (!pongs_.empty()) {
        std::vector<uint8_t> pong{4, 'P', 'O', 'N', 'G'};
        pong.insert(pong.end(), pongs_.front().begin(), pongs_.front().end());
        if (!seal_command(pong))
            break;
        pongs_.pop_front();
    }
    if (ping_due_) {
        const std::vector<uint8_t> ping{4,
                                        'P',
                                        'I',
                                        'N',
                                        'G',
                                        static_cast<uint8_t>(ttl_ds >> 8),
                                        static_cast<uint8_t>(ttl_ds & 0xff)};
        ping_due_ = !seal_command(ping);
    }
}

bool engine_output::seal_command(std::span<const uint8_t> body) {
    if (e_.tf_->seal(wire::frame_flag::command, body, sealed_) == wire::wire_error::none)
        return true;
    e_.fail("seal failed", 0);
    return false;
}

// false: does not fit this batch (m untouched).  On success m is consumed:
// closed, or kept in in_flight_ while the encoder references its body.
bool engine_output::add_frame(msg_t &m) {
    const bool more = m.has_more();
    auto body = bytes_of(m);
    const bool sub_side = e_.opts_.type == ZMQ_SUB || e_.opts_.type == ZMQ_XSUB;
    bool ok;
    if (e_.tf_)
        ok = add_sealed(m);
    else if (sub_side && !out_more_ && !more && !body.empty() && body[0] <= 1)
        ok = enc_.add_subscription(body[0] == 1, body.subspan(1), e_.peer_version_);
    else
        ok = enc_.add(body, more);
    if (!ok)
        return false;
    out_more_ = more;
    if (!e_.tf_ && m.size() > wire::frame_encoder::default_copy_threshold) {
        in_flight_.push_back(m);  // referenced by the encoder until written
        m.init();
    } else
        m.close();
    return true;
}

// Transform path: the sealed frame is appended to this batch's byte run.
//
// A frame larger than a batch is not the batch's end when more such frames are
// queued: up to sealed_run_bytes of them are sealed into one batch before it
// is written.  With one large sealed frame per batch the peer's IO thread read
// a frame, opened it and found its socket empty (the next frame was still
// being sealed here), so it woke its application thread for every message,
// which took the one message and slept again: about one sleep/wake cycle per
// 256 KiB message on one core (docs/profiling/2026-12-03-curve-large.md).  A
// batch of several lets the peer find the next frame queued behind the one it
// opened, and its wake-up deferral (engine_input.hpp) then wakes the
// application once for the run.  Only what is already queued joins: a lone
// message is written as soon as it is sealed.  Small frames keep the adaptive
// batch size.  The cost: the first frame of a run waits for the others' sealing
// (about 0.1-0.2 ms per 256 KiB frame), and the sealed run's buffer keeps up to
// sealed_run_bytes plus one frame per streaming connection.
//
// A SUB/XSUB's subscription message (\x01/\x00 + topic) goes as a sealed
// SUBSCRIBE/CANCEL command to a ZMTP 3.1 peer, as libzmq sends it.
bool engine_output::add_sealed(msg_t &m) {
    const bool large = m.size() > out_size_.now();
    const size_t room = large ? std::max(out_size_.now(), sealed_run_bytes) : out_size_.now();
    if (!sealed_.empty() && sealed_.size() + m.size() > room)
        return false;
    if (large)
        batch_limit_ = std::max(batch_limit_, room);
    auto body = bytes_of(m);
    const bool sub_side = e_.opts_.type == ZMQ_SUB || e_.opts_.type == ZMQ_XSUB;
    if (sub_side && !out_more_ && !m.has_more() && !body.empty() && body[0] <= 1 &&
        e_.peer_version_.has_subscribe_commands()) {
        const std::string_view name = body[0] == 1 ? "\x09"
                                                     "SUBSCRIBE"
                                                   : "\x06"
                                                     "CANCEL";
        std::vector<uint8_t> cmd(name.begin(), name.end());
        cmd.insert(cmd.end(), body.begin() + 1, body.end());
        seal_command(cmd);
        return true;  // m is consumed by the caller either way
    }
    const uint8_t flags = m.has_more() ? wire::frame_flag::more : 0;
    if (e_.tf_->seal(flags, body, sealed_) != wire::wire_error::none)
        e_.fail("seal failed", 0);  // m is still consumed by the caller
    return true;
}

// Sends the batch from where its bytes are (no copy).  true: all written.
// false: the socket buffer is full (the rest goes when it is writable) or
// the connection failed.
bool engine_output::write_batch() {
    const size_t cap = write_cap();
    while (!gather_.empty()) {
        std::error_code ec;
        // A batch's first write: the rules' cut, or the knob's cap when that is smaller.
        const bool pausing = first_write_pending_ && pause_after_first_;
        const size_t first =
            first_write_pending_ ? first_write(gather_.pending_bytes(), more_waiting_, pausing) : 0;
        gather_.write_to(e_.sock_.native_handle(),
                         first > 0 && (cap == 0 || first < cap) ? first : cap, ec);
        if (ec == std::errc::resource_unavailable_try_again) {
            wait_writable();  // nothing went: the first write is still to come
            return false;
        }
        first_write_pending_ = false;
        if (ec) {
            e_.write_failed();
            return false;
        }
        if (pausing && !gather_.empty()) {
            pause_after_first_ = false;
            wait_writable();  // the rest after one trip through epoll (peer_pause.hpp)
            return false;
        }
    }
    batch_written();
    return true;
}

// Every write's cap (ZMQ_ASIO_TCP_MAX_TRANSFER); 0 = none: the whole gather list
// goes to one sendmsg when the kernel takes it.
std::size_t engine_output::write_cap() const noexcept {
    const int cap = e_.opts_.batch.max_transfer;
    return cap > 0 ? static_cast<std::size_t>(cap) : 0;
}

// A batch's first sendmsg (0: no cut of its own): 8 KiB when it pauses for the
// peer, else write_cap.hpp's cap, else, where the connection paces, the short piece.
std::size_t engine_output::first_write(std::size_t bytes, bool more_waiting, bool pausing) {
    if (pausing)
        return pause_first_bytes;
    const auto &b = e_.opts_.batch;
    const std::size_t first =
        b.first_write > 0 ? first_write_cap(b.first_write, bytes, more_waiting) : 0;
    if (first == 0 && b.split_when_paced)
        return paced_.first_write(e_.sock_.native_handle(), bytes);
    return first;
}

// How the application cuts its direct write of a lone message (core/direct_send.hpp):
// as this output would cut a batch of those bytes with nothing queued behind it.
// Called on the application's thread while it holds the connection, when this
// output is idle, so peer_ and paced_ are not in use here meanwhile.
direct_send::cut engine_output::direct_cut(std::size_t bytes) {
    const bool pausing = pause_candidate(e_.opts_.batch.pause_for_peer, bytes) &&
                         peer_.elsewhere(e_.sock_.native_handle());
    return {first_write(bytes, false, pausing), write_cap()};
}

// Asks the host whether a frame waits behind the batch, without taking it:
// the frame is pulled and handed straight back (engine_host::return_frame).
bool engine_output::host_has_frame() {
    msg_t next;
    if (e_.stopped() || !e_.host_->pull_frame(next))
        return false;
    e_.host_->return_frame(next);
    return true;
}

// Whether this batch's first write pauses for the peer (transport/peer_pause.hpp):
// checked in the order of cost, the placement last (two syscalls, once a second).
bool engine_output::pause_for_peer() {
    const std::size_t bytes = gather_.pending_bytes();
    if (!pause_candidate(e_.opts_.batch.pause_for_peer, bytes) || more_waiting_)
        return false;
    if (host_has_frame())
        return false;
    return peer_.elsewhere(e_.sock_.native_handle());
}

// Once per connection, over ipc to a peer pinned to other CPUs: one wait for
// writability, whose handler does nothing.  Its lasting effect is the point
// (transport/drain_wake.hpp): Asio leaves write interest registered with epoll
// for the descriptor's life, so from now on this IO thread wakes whenever
// the peer takes bytes off the socket, and its CPU is awake for the answer.
// The placement is looked up with the pause's (at most once a second), so a
// process that pins itself after connecting is still caught.
void engine_output::arm_drain_wake() {
    if (drain_wake_armed_ || !e_.opts_.batch.drain_wake ||
        !peer_.elsewhere(e_.sock_.native_handle()))
        return;
    drain_wake_armed_ = true;
    drop_write_waiter();  // the socket's own interest wakes us from now on (pump: idle here)
    e_.sock_.async_wait(asio::socket_base::wait_write,
                        [self = e_.shared_from_this()](const asio::error_code &) {});
}

// A wait for writability, when the socket buffer is full or the tcp pause waits.
// Asio registers EPOLLOUT for a descriptor the first time a write waits on it and
// keeps it for the descriptor's life.  On a unix socket that means a wake-up of
// this IO thread every time the peer frees bytes we sent, whether or not anything
// waits to be written: the drain wake (drain_wake.hpp), wanted for a peer pinned
// elsewhere and armed only there.  Left behind by a stream's waits it cost: with
// both ends on one CPU, one-core ipc 256 KiB streams about one extra sleep and
// wake of the sender's IO thread per message
// (docs/profiling/2026-12-05-ceiling-source.md); with unpinned processes and 2 IO
// threads, PUSH_PULL ipc 64 B round trips after a stream ~+40% p50, as every
// request's drain woke the PUSH's IO thread, which never reads the answer (the
// PULL's connection is on the other one; docs/profiling/2026-12-05-lasting-interest.md).
// So over ipc, unless the drain wake is armed, the wait goes through a duplicate
// of the descriptor (write_waiter()), closed again when the output goes idle: the
// interest lasts while something waits to be written, as libzmq's does.  (Unpinned
// 64 KiB round trips once needed the lasting interest, before the application
// wrote them itself; probes with direct send found them as fast or faster
// without it.)  tcp keeps the socket's own: it signals write space only after a
// write found the buffer full.
void engine_output::wait_writable() {
    write_ = write_state::writable;
    auto done = [self = e_.shared_from_this()](const asio::error_code &ec) {
        auto &out = self->output_;
        out.write_ = write_state::idle;
        if (self->stopped())
            return;
        if (ec)
            return self->write_failed();
        if (out.write_batch())
            out.pump();
    };
    if (auto *waiter = write_waiter())
        waiter->async_wait(asio::posix::descriptor_base::wait_write, std::move(done));
    else
        e_.sock_.async_wait(asio::socket_base::wait_write, std::move(done));
}

// The duplicate descriptor for wait_writable(), opened on first use; null where the
// socket's own interest is wanted or kept, or when no duplicate can be made (then
// the socket's own: correct, only with the extra wake-ups).
asio::posix::stream_descriptor *engine_output::write_waiter() {
    if (!e_.opts_.batch.drain_wake || drain_wake_armed_)
        return nullptr;
    if (write_wait_fd_.is_open())
        return &write_wait_fd_;
    const int fd = ::fcntl(e_.sock_.native_handle(), F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
        return nullptr;
    asio::error_code ec;
    write_wait_fd_.assign(fd, ec);  // registers it with epoll (no write interest yet)
    if (ec) {
        ::close(fd);
        return nullptr;
    }
    return &write_wait_fd_;
}

// Asio deregisters an assigned descriptor from epoll before closing it (it may be a
// duplicate, whose registration would otherwise outlive it), so the socket is left
// with no write interest.
void engine_output::drop_write_waiter() noexcept {
    if (!write_wait_fd_.is_open())
        return;
    asio::error_code ignore;
    write_wait_fd_.close(ignore);
}

// Attaches to the session's direct path once the handshake is done, and follows
// it when the session gets a new pipe (or none).
void engine_output::sync_direct() {
    const auto &d = e_.host_->direct_path();
    if (d == direct_ || !direct_eligible())
        return;
    detach_direct();
    if (!d)
        return;
    direct_ = d;
    std::weak_ptr<engine_t> weak = e_.shared_from_this();
    auto wake = [weak, ex = e_.sock_.get_executor()] {
        asio::post(ex, [weak] {
            if (auto self = weak.lock())
                self->restart_output();
        });
    };
    const auto &b = e_.opts_.batch;
    direct_send::cut_rule cut_by;  // none: one sendmsg per message (ipc)
    if (b.first_write > 0 || b.pause_for_peer || b.split_when_paced || b.max_transfer > 0)
        cut_by = [this](std::size_t bytes) { return direct_cut(bytes); };
    direct_->attach(this, e_.sock_.native_handle(), std::move(wake), std::move(cut_by));
}

// Where the endpoint allows it (ipc; tcp at SNDHWM 0), no CURVE (the nonce and sealing are
// this thread's), not STREAM (no framing), not SUB/XSUB (subscriptions are
// encoded here).
bool engine_output::direct_eligible() const {
    const int type = e_.opts_.type;
    const auto &b = e_.opts_.batch;
    if (b.direct_send_unlimited_hwm_only && e_.opts_.sndhwm != 0)
        return false;
    return b.direct_send && !e_.tf_ && !e_.raw_ && type != ZMQ_SUB && type != ZMQ_XSUB;
}

void engine_output::detach_direct() noexcept {
    if (!direct_)
        return;
    direct_->detach(this);
    direct_.reset();
}

// Takes the connection back from the application before anything is pulled or
// written; a message it left half written goes first, as a batch of its own.
// false: that batch waits for writability (or the connection failed).
bool engine_output::claim_direct() {
    direct_send::rest rest;
    if (!direct_->claim(rest))
        return true;
    gather_.clear();
    std::size_t skip = rest.written;  // bytes of headers and bodies already sent
    auto add_unsent = [&](const void *p, std::size_t n) {
        const std::size_t gone = std::min(skip, n);
        skip -= gone;
        gather_.add(static_cast<const std::uint8_t *>(p) + gone, n - gone);
    };
    // A small frame's bytes live inside its msg_t, which moves (into in_flight_,
    // whose storage may move too): they are copied here, into room reserved up
    // front so that adding them never moves what the gather list points at.
    std::size_t small = 0;
    for (std::size_t i = 0; i < rest.count; ++i)
        small += rest.frames[i].is_external() ? 0 : rest.frames[i].size();
    direct_small_.clear();
    direct_small_.reserve(small);
    for (std::size_t i = 0; i < rest.count; ++i) {
        msg_t &f = rest.frames[i];
        add_unsent(rest.headers[i], rest.header_sizes[i]);
        if (f.is_external()) {
            add_unsent(f.data(), f.size());  // the body stays where it is
        } else {
            const auto *p = static_cast<const std::uint8_t *>(f.data());
            const std::size_t at = direct_small_.size();
            direct_small_.insert(direct_small_.end(), p, p + f.size());
            add_unsent(direct_small_.data() + at, f.size());
        }
        in_flight_.push_back(f);  // released when written (batch_written)
        f.init();
    }
    first_write_pending_ = false;
    pause_after_first_ = false;
    return write_batch();
}

void engine_output::yield() {
    write_ = write_state::yielded;  // nobody else writes until this turn comes
    asio::post(e_.sock_.get_executor(), [self = e_.shared_from_this()] {
        if (self->output_.write_ == write_state::yielded)
            self->output_.write_ = write_state::idle;
        self->output_.pump();
    });
}

// The batch is on the wire: the encoder's staging run and the referenced
// bodies are free again.
void engine_output::batch_written() {
    if (!e_.raw_)
        enc_.consume(enc_.pending_bytes());
    sealed_.clear();
    release_in_flight();
}

void engine_output::release_in_flight() {
    for (auto &m : in_flight_)
        m.close();
    in_flight_.clear();
}

}  // namespace zlink
