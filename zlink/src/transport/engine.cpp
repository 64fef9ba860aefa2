#include "transport/engine.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <asio/post.hpp>
#include <asio/write.hpp>
#include <cerrno>
#include <cstring>
#include <utility>

#include "transport/write_cap.hpp"
#include "wire/command.hpp"
#include "wire/error.hpp"
#include "wire/mechanism.hpp"
#include "wire/zap.hpp"
#include "zmq.h"

namespace zlink {

namespace {
using steady = std::chrono::steady_clock;
// Bodies at least this large that are still missing after the buffered bytes
// are read by the kernel directly into the message.
constexpr size_t in_place_threshold = 1024;
// Output batches written in one go before the engine lets other work run.
constexpr int batches_per_turn = 16;

uint64_t max_body(const options_t &o) {
    return o.maxmsgsize >= 0 ? static_cast<uint64_t>(o.maxmsgsize)
                             : wire::frame_decoder::unlimited;
}

size_t batch_bytes(int configured) { return static_cast<size_t>(std::max(configured, 256)); }

std::span<const uint8_t> bytes_of(const msg_t &m) {
    return {static_cast<const uint8_t *>(m.data()), m.size()};
}

int monitor_event(wire::failure_event e) {
    switch (e) {
    case wire::failure_event::auth: return ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
    case wire::failure_event::no_detail: return ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
    case wire::failure_event::protocol: break;
    }
    return ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL;
}
}  // namespace

engine_t::engine_t(socket_type sock, const options_t &opts, std::unique_ptr<wire::handshake> hs,
                   engine_host &host)
    : sock_(std::move(sock)),
      opts_(opts),
      host_(&host),
      hs_(std::move(hs)),
      raw_(!hs_),
      dec_(max_body(opts)),
      enc_(batch_bytes(opts.out_batch)),
      in_size_(batch_bytes(opts.in_batch), batch_bytes(opts.in_batch_ceiling)),
      out_size_(batch_bytes(opts.out_batch), batch_bytes(opts.out_batch_ceiling),
                batch_size::start::at_ceiling),
      handshake_timer_(sock_.get_executor()),
      heartbeat_timer_(sock_.get_executor()) {
    in_msg_.init();
    chunk_.init();
}

engine_t::~engine_t() {
    in_msg_.close();
    chunk_.close();
    release_in_flight();
}

// ------------------------------------------------------------------ lifecycle

void engine_t::start() {
    auto self = shared_from_this();
    if (raw_) {
        ready_ = true;
        host_->engine_ready(peer_info{});
    } else
        arm_handshake_timer();
    pump_out();
    start_read();
}

void engine_t::terminate() {
    if (stopped_)
        return;
    stopped_ = true;
    asio::error_code ignore;
    sock_.shutdown(asio::socket_base::shutdown_both, ignore);
    sock_.close(ignore);
    handshake_timer_.cancel();
    heartbeat_timer_.cancel();
}

void engine_t::stop(engine_end why) {
    if (stopped_)
        return;
    terminate();
    host_->engine_stopped(why);
}

void engine_t::fail(const char *reason, int event, int value) {
    stop(engine_end{ready_, event, value, false, reason, held_});
}

// A read that ends the connection. Its value is the errno libzmq 4.3.5 reports with
// HANDSHAKE_FAILED_NO_DETAIL when this happens mid-handshake: EPIPE for the end of
// the stream (libzmq's read turns 0 bytes into EPIPE), else the socket's error.
void engine_t::fail_read(const asio::error_code &ec) {
    // The handshake already failed and our ERROR is on its way: a peer that
    // read it and hung up ends the connection with that failure (e.g. ZAP's
    // 400), not as a hang-up.  Reads can see the EOF before our write's
    // completion runs (the read loop is posted, not woken by the reactor).
    if (failing_set_)
        return stop(failing_);
    const bool eof = ec == asio::error::eof;
    const bool system = ec.category() == asio::system_category();
    fail(eof ? "peer closed the connection" : "read failed", 0, eof ? EPIPE : system ? ec.value() : 0);
}

void engine_t::close_after_flush() {
    auto self = shared_from_this();
    if (stopped_)
        return;
    close_after_flush_ = true;
    if (!ready_)
        return stop(engine_end{false, 0, 0, true, "closed before the handshake"});
    pump_out();
}

void engine_t::restart_input() {
    auto self = shared_from_this();
    if (!input_blocked_ || stopped_)
        return;
    input_blocked_ = false;
    if (raw_)
        return process_raw_input();
    process_input();
}

void engine_t::restart_output() {
    auto self = shared_from_this();
    if (!stopped_)
        pump_out();
}

// ------------------------------------------------------------------ handshake

void engine_t::arm_handshake_timer() {
    if (opts_.handshake_ivl <= 0)
        return;
    // A peer that never completes the handshake must not hold a connection.
    handshake_timer_.expires_after(std::chrono::milliseconds(opts_.handshake_ivl));
    handshake_timer_.async_wait([self = shared_from_this()](const asio::error_code &ec) {
        if (!ec && !self->stopped_ && !self->ready_)
            self->fail("handshake timeout", ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL);
    });
}

// Feeds buffered bytes to the handshake until it is done, failed, waiting for
// ZAP, or out of bytes.
void engine_t::advance_handshake() {
    in_handshake_ = true;
    for (;;) {
        in_begin_ += hs_->feed(buffered());
        if (hs_->failed()) {
            in_handshake_ = false;
            return handshake_failed();
        }
        const wire::zap_request *zap = hs_->zap_pending();
        if (!zap || zap_asked_)
            break;
        zap_asked_ = true;
        host_->zap_request(*zap);  // may answer at once (zap_answer re-enters here)
        if (stopped_)
            return;
    }
    in_handshake_ = false;
    pump_out();  // our READY, once the greeting was accepted
    if (stopped_)
        return;
    if (hs_->zap_pending()) {
        // Waiting for zap_answer(), still reading: a peer that hangs up meanwhile
        // ends the connection now with EPIPE, as in libzmq 4.3.5 (a handler that
        // never answers must not hold it until HANDSHAKE_IVL). Bytes the peer
        // sends after its handshake wait undecoded; once a whole input batch of
        // them is buffered, reading waits for the answer too (memory bounded).
        if (in_end_ - in_begin_ < in_size_.now())
            start_read();
        return;
    }
    if (hs_->done())
        return handshake_done();
    start_read();
}

void engine_t::zap_answer(const wire::zap_reply &reply) {
    auto self = shared_from_this();
    if (stopped_ || !hs_)
        return;
    hs_->zap_answer(reply);
    zap_asked_ = false;
    if (!in_handshake_)
        advance_handshake();
}

void engine_t::zap_failed(wire::wire_error error) {
    auto self = shared_from_this();
    if (stopped_ || !hs_ || ready_)
        return;
    const auto f = wire::classify_failure(error, {});
    fail(wire::to_string(error), monitor_event(f.event), static_cast<int>(f.value));
}

std::string engine_t::peer_address() const {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getpeername(const_cast<socket_type &>(sock_).native_handle(),
                      reinterpret_cast<sockaddr *>(&ss), &len) != 0)
        return {};
    char text[INET6_ADDRSTRLEN] = {};
    if (ss.ss_family == AF_INET)
        ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in *>(&ss)->sin_addr, text, sizeof text);
    else if (ss.ss_family == AF_INET6)
        ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6 *>(&ss)->sin6_addr, text, sizeof text);
    return text;
}

void engine_t::handshake_failed() {
    // The event and value libzmq 4.3.5 reports for this failure (AUTH with the ZAP
    // status code, NO_DETAIL with EFAULT without a ZAP handler, else PROTOCOL).
    const auto f = wire::classify_failure(hs_->error(), hs_->error_detail());
    engine_end why{false, monitor_event(f.event), static_cast<int>(f.value), false,
                   wire::to_string(hs_->error())};
    if (wire::zap_holds_connection(hs_->error(), hs_->error_detail()))
        return hold_refused(why.event, why.value);
    if (hs_->outgoing().empty())
        return stop(why);
    // RFC 37: send our ERROR command before closing.
    failing_ = why;
    failing_set_ = true;
    pump_out();
}

// A ZAP 300 (temporary failure): as libzmq 4.3.5 does, send nothing more and keep
// the connection open until the handshake timer (HANDSHAKE_IVL) or the peer ends
// it. Closing at once would make the peer reconnect and ask again in a loop.
void engine_t::hold_refused(int event, int value) {
    held_ = true;
    host_->handshake_refused(event, value);
    start_read();  // to notice the hang-up; whatever the peer sends is dropped
}

void engine_t::handshake_done() {
    handshake_timer_.cancel();
    ready_ = true;
    peer_version_ = hs_->peer_version();
    tf_ = hs_->transform();
    peer_info peer;
    peer.socket_type = static_cast<int>(hs_->peer_socket_type());
    auto id = hs_->peer_routing_id();
    peer.routing_id.assign(reinterpret_cast<const char *>(id.data()), id.size());
    peer.metadata = hs_->peer_metadata();
    peer.user_id = hs_->user_id();
    host_->engine_ready(peer);
    if (stopped_)
        return;
    arm_heartbeat();
    process_input();  // frames that came with the peer's READY
    pump_out();
}

// ---------------------------------------------------------------------- input

// Reading follows the write side: the engine reads with non-blocking recv()
// calls of its own and asks Asio only to wait for readability once the socket
// is empty.  Why: an Asio read operation costs an operation object, the
// reactor's descriptor lock and a trip through the scheduler per read; a
// 256 KiB message takes several reads, and callgrind counted that machinery
// at ~4,400 instructions per message over ipc, which left zlink ~0.8% above
// libzmq there (docs/profiling/2026-11-24-direct-reads.md).
//
// start_read() from outside the loop posts the loop (never reads inline: its
// callers, e.g. the session restarting input, do not expect frames pushed
// back at them from inside the call); from inside it (on_read's processing
// asked for more) it only tells the loop to go on.
void engine_t::start_read() {
    if (reading_ || input_blocked_ || stopped_)
        return;
    reading_ = true;
    if (in_read_loop_) {
        read_more_ = true;
        return;
    }
    asio::post(sock_.get_executor(), [self = shared_from_this()] { self->read_loop(); });
}

// reading_ is set on entry (a read is owed to this engine).  Reads until the
// socket is empty (then waits for readability), the input stops asking for
// more (blocked, stopped) or reads_per_turn reads ran (1 in the handshake):
// then the rest of the turn is posted, so one busy connection cannot starve
// the others of this IO thread, nor its command mailbox.
void engine_t::read_loop() {
    auto self = shared_from_this();
    in_read_loop_ = true;
    for (int turn = 0;; ++turn) {
        if (stopped_)
            break;
        // Before the handshake is done, one read per turn: connections then
        // complete their handshakes in the order their bytes arrived, as when
        // every read was its own Asio operation (libzmq's test_spec_req
        // round-robins over peers in the order they connected; looping let a
        // connection whose bytes were all there finish ahead of the others).
        if (turn == (ready_ ? reads_per_turn : 1)) {
            asio::post(sock_.get_executor(), [self] { self->read_loop(); });
            break;
        }
        auto buf = next_read_buffer();
        if (!buf.data()) {
            reading_ = false;
            fail("out of memory", 0);
            break;
        }
        const ssize_t n = ::recv(sock_.native_handle(), buf.data(), buf.size(), MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            body_in_place_ = false;  // the next turn chooses its buffer again
            wait_readable();
            break;
        }
        read_more_ = false;
        if (n < 0)
            on_read(asio::error_code(errno, asio::system_category()), 0);
        else if (n == 0)
            on_read(asio::error::eof, 0);
        else
            on_read({}, static_cast<size_t>(n));
        if (!read_more_)
            break;  // blocked, stopped, or a read is owed elsewhere
    }
    in_read_loop_ = false;
}

void engine_t::wait_readable() {
    sock_.async_wait(asio::socket_base::wait_read,
                     [self = shared_from_this()](const asio::error_code &ec) {
                         if (ec)
                             return self->on_read(ec, 0);  // clears reading_, reports
                         if (!self->stopped_)
                             self->read_loop();
                     });
}

// Where the next read goes: straight into the body of a large message being
// decoded (zero copy: the kernel writes into it), else the receive chunk.
// Null when a fresh chunk could not be allocated.
asio::mutable_buffer engine_t::next_read_buffer() {
    auto rem = dec_.body_remaining();
    if (ready_ && !raw_ && in_begin_ == in_end_ && rem.size() >= in_place_threshold) {
        body_in_place_ = true;
        return asio::buffer(rem.data(), rem.size());
    }
    if (!prepare_chunk())
        return {};
    read_room_ = std::min(chunk_.size() - in_end_, in_size_.now());
    return asio::buffer(chunk_bytes() + in_end_, read_room_);
}

// Reads go into a chunk several batches large.  Small received frames become
// windows into it (no allocation, no copy per message), so a chunk that has
// windows is never written again from its start: reading goes on after the
// last read, and a fresh chunk comes when less than one batch is left, or
// when the batch shrank and the chunk is more than twice what it needs (a
// connection whose traffic turned light gives its streaming memory back).
// Bytes not yet decoded move along to the fresh chunk.
bool engine_t::prepare_chunk() {
    const size_t batch = in_size_.now();
    if (!chunk_windows_ && in_begin_ == in_end_)
        in_begin_ = in_end_ = 0;  // nothing refers to the chunk: start over
    if (chunk_.size() >= in_end_ + batch && chunk_.size() <= 2 * chunk_batches * batch)
        return true;
    msg_t fresh;
    if (fresh.init_size(chunk_batches * batch) != 0)
        return false;
    const size_t pending = in_end_ - in_begin_;
    if (pending)
        std::memcpy(fresh.data(), chunk_bytes() + in_begin_, pending);
    chunk_.close();
    chunk_.move(fresh);
    chunk_windows_ = false;
    in_begin_ = 0;
    in_end_ = pending;
    return true;
}

void engine_t::on_read(const asio::error_code &ec, size_t n) {
    reading_ = false;
    if (stopped_)
        return;
    if (ec)
        return fail_read(ec);
    if (watching_silence_)
        last_recv_ = steady::now();
    if (held_) {
        in_begin_ = in_end_ = 0;
        return start_read();
    }
    if (body_in_place_) {
        body_in_place_ = false;
        if (dec_.body_filled(n) == wire::frame_decoder::step::frame)
            frame_complete();
    } else {
        in_end_ += n;
        read_bytes_ = n;
    }
    if (raw_)
        return process_raw_input();
    if (!ready_)
        return advance_handshake();
    process_input();
}

// STREAM: every read is one message of raw bytes.
void engine_t::process_raw_input() {
    if (!in_msg_ready_) {
        in_msg_.close();
        if (in_msg_.init_buffer(chunk_bytes() + in_begin_, in_end_ - in_begin_) != 0)
            return fail("out of memory", 0);
        in_begin_ = in_end_ = 0;
        in_msg_ready_ = true;
    }
    const bool taken = host_->push_frame(in_msg_);
    if (taken)
        in_msg_ready_ = false;
    else
        input_blocked_ = true;
    host_->flush_frames();
    start_read();
}

// Decodes what is buffered, publishes it with one flush, reads on.
void engine_t::process_input() {
    const size_t frames_before = frames_in_;
    decode_frames();
    if (stopped_)
        return;
    if (read_bytes_) {  // after a chunk read: size the next one
        in_size_.observe(read_bytes_, frames_in_ - frames_before, read_bytes_ == read_room_);
        read_bytes_ = 0;
    }
    host_->flush_frames();  // one wake-up for the whole batch (also when blocked)
    start_read();
}

// Returns false when it had to stop (host full, or the connection failed).
bool engine_t::decode_frames() {
    using step = wire::frame_decoder::step;
    for (;;) {
        if (in_msg_ready_ && !deliver_frame())
            return false;
        if (stopped_)
            return false;
        size_t used = 0;
        step s = dec_.decode(buffered(), used);
        in_begin_ += used;
        switch (s) {
        case step::header:
            if (!begin_body())
                return false;
            break;
        case step::frame: frame_complete(); break;
        case step::error:
            fail(wire::to_string(dec_.error()), ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL);
            return false;
        case step::need_more: return true;
        }
    }
}

// A body already complete in the chunk and too big to be inline becomes a
// window into the chunk; any other body gets its own storage (the decoder
// copies what is buffered; a large rest is then read straight into it).
bool engine_t::begin_body() {
    const size_t size = static_cast<size_t>(dec_.header().size);
    in_msg_.close();
    if (size > msg_t::max_inline && size <= in_end_ - in_begin_) {
        if (in_msg_.init_window(chunk_, chunk_bytes() + in_begin_, size) == 0) {
            chunk_windows_ = true;
            dec_.skip_body();
            return true;
        }
    } else if (in_msg_.init_size(size) == 0) {
        dec_.set_body({static_cast<uint8_t *>(in_msg_.data()), size});
        return true;
    }
    fail("out of memory", 0);
    return false;
}

void engine_t::frame_complete() {
    ++frames_in_;
    if (tf_)
        return open_frame();
    const auto &h = dec_.header();
    in_msg_ready_ = true;
    in_cmd_ = h.command();
    if (h.more())
        in_msg_.set_flags(msg_t::more);
}

// With a frame transform every received frame is a protected one (CURVE: a
// MESSAGE command); a frame in clear is refused, never delivered. The
// plaintext's flags say whether it is a message part or a command.
void engine_t::open_frame() {
    std::uint8_t flags = 0;
    opened_.clear();
    const auto e = tf_->open(bytes_of(in_msg_), flags, opened_);
    if (e != wire::wire_error::none) {
        const auto f = wire::classify_failure(e, {});
        return fail(wire::to_string(e), ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL, static_cast<int>(f.value));
    }
    msg_t m;
    if (m.init_buffer(opened_.data(), opened_.size()) != 0)
        return fail("out of memory", 0);
    if (flags & wire::frame_flag::more)
        m.set_flags(msg_t::more);
    in_msg_.move(m);
    in_msg_ready_ = true;
    in_cmd_ = (flags & wire::frame_flag::command) != 0;
}

// Hands the decoded frame to the host (commands are handled here first).
bool engine_t::deliver_frame() {
    if (in_cmd_) {
        in_cmd_ = false;
        if (!handle_command())
            return false;
        if (!in_msg_ready_)
            return true;  // consumed here
    }
    if (!host_->push_frame(in_msg_)) {
        input_blocked_ = true;  // resume on restart_input
        return false;
    }
    in_msg_ready_ = false;
    return true;
}

// Returns false when the connection failed.  Leaves in_msg_ready_ set when the
// command became a message for the host (subscriptions, opened MESSAGEs).
bool engine_t::handle_command() {
    wire::command_view cv;
    auto body = bytes_of(in_msg_);
    if (wire::parse_command(body, cv) != wire::wire_error::none) {
        fail("malformed command", ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL);
        return false;
    }
    switch (cv.kind) {
    case wire::command_kind::subscribe:
    case wire::command_kind::cancel: {
        // To the socket in message form: \x01/\x00 + topic.
        msg_t m;
        if (m.init_size(cv.data.size() + 1) != 0) {
            fail("out of memory", 0);
            return false;
        }
        auto *p = static_cast<uint8_t *>(m.data());
        p[0] = cv.kind == wire::command_kind::subscribe ? 1 : 0;
        if (!cv.data.empty())
            std::memcpy(p + 1, cv.data.data(), cv.data.size());
        in_msg_.move(m);
        return true;
    }
    case wire::command_kind::ping: on_ping(cv.data); break;
    case wire::command_kind::error: fail("peer sent ERROR", ZMQ_EVENT_DISCONNECTED); return false;
    default: break;  // PONG and unknown commands: nothing to do
    }
    in_msg_.close();
    in_msg_.init();
    in_msg_ready_ = false;
    return true;
}

void engine_t::on_ping(std::span<const uint8_t> data) {
    uint16_t ttl = 0;
    std::span<const uint8_t> ctx;
    // RFC 37 allows at most 16 octets of context; like libzmq, a longer one is
    // answered with its first 16 rather than ignored (libzmq's test_heartbeats).
    data = data.first(std::min(data.size(), 2 + wire::max_ping_context));
    if (wire::parse_ping_data(data, ttl, ctx) != wire::wire_error::none)
        return;
    // Every PING gets its PONG, also when several arrive while output is busy
    // (our handshake still being written when the reads run ahead): a single
    // slot answered only the last (PingContext test).  Bounded: a peer pinging
    // faster than we can write loses its oldest answers, never our memory.
    if (pongs_.size() == max_pending_pongs)
        pongs_.pop_front();
    pongs_.emplace_back(reinterpret_cast<const char *>(ctx.data()), ctx.size());
    if (ttl > 0 && peer_ttl_ms_ == 0) {
        peer_ttl_ms_ = ttl * 100;
        arm_heartbeat();
    }
    pump_out();
}

// --------------------------------------------------------------------- output

// Writes batch after batch while the host has frames and the kernel takes
// them.  After batches_per_turn batches it yields (the rest goes out on the
// next turn of the io_context), so a busy sender cannot keep this thread from
// reading or from its other connections.
void engine_t::pump_out() {
    for (int batches = 0; !writing_ && !stopped_; ++batches) {
        if (hs_ && !hs_->outgoing().empty())
            return write_handshake();
        if (!ready_)
            return;
        if (batches == batches_per_turn)
            return yield_output();
        more_waiting_ = false;
        if (!fill_batch()) {
            if (close_after_flush_ && !stopped_)
                stop(engine_end{true, 0, 0, true, "closed after flush"});
            return;
        }
        first_write_pending_ = true;
        write_batch();
    }
}

void engine_t::write_handshake() {
    auto out = hs_->outgoing();
    writing_ = true;
    asio::async_write(sock_, asio::buffer(out.data(), out.size()),
                      [self = shared_from_this()](const asio::error_code &ec, size_t n) {
                          self->writing_ = false;
                          if (self->stopped_)
                              return;
                          if (ec)
                              return self->fail("write failed", 0);
                          self->hs_->consume_outgoing(n);
                          if (self->failing_set_ && self->hs_->outgoing().empty())
                              return self->stop(self->failing_);
                          self->pump_out();
                      });
}

// Pulls frames into the encoder until the batch holds out_size_.now()
// bytes (copied or referenced) or the host has none.  Counting referenced
// bodies too matters: an engine that drained the pipe into one huge gather
// list would leave it empty, so the pipe's reader (us) would be asleep at
// every send and each zmq_send would have to wake this thread (measured at
// 256 KiB: one extra context switch per message).  A batch of about one
// large message lets the sender queue the next ones while this one is written.
bool engine_t::fill_batch() {
    if (raw_)
        return fill_raw_batch();
    const size_t limit = out_size_.now();
    enc_.resize_staging(limit);  // empty here (the last batch is written); no-op if unchanged
    add_heartbeats();
    size_t frames = 0;
    bool full = false;
    msg_t m;
    while (!stopped_ && host_->pull_frame(m)) {
        if (!add_frame(m)) {
            host_->return_frame(m);  // first of the next batch
            more_waiting_ = true;
            full = true;
            break;
        }
        ++frames;
        if (enc_.pending_bytes() + sealed_.size() >= limit) {
            full = true;
            if (first_write_depends_on_more(opts_.first_write, enc_.pending_bytes() + sealed_.size()))
                more_waiting_ = host_has_frame();
            break;
        }
    }
    if (stopped_ || (enc_.empty() && sealed_.empty())) {
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
bool engine_t::fill_raw_batch() {
    size_t bytes = 0;
    msg_t m;
    while (!close_after_flush_ && bytes < out_size_.now() && host_->pull_frame(m)) {
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
        first_write_depends_on_more(opts_.first_write, bytes))
        more_waiting_ = host_has_frame();
    gather_.clear();
    for (auto &f : in_flight_)
        gather_.add(f.data(), f.size());
    return !in_flight_.empty();
}

void engine_t::add_heartbeats() {
    if (pongs_.empty() && !ping_due_)
        return;  // every batch asks; almost none has a PING or PONG to carry
    // TTL travels in deciseconds, 16 bits: cap like libzmq instead of wrapping.
    const int ttl_ds = std::min(opts_.heartbeat_ttl / 100, 65535);
    if (tf_)
        return add_sealed_heartbeats(static_cast<uint16_t>(ttl_ds));
    while (!pongs_.empty() &&
           enc_.add_pong({reinterpret_cast<const uint8_t *>(pongs_.front().data()),
                          pongs_.front().size()}))
        pongs_.pop_front();
    if (ping_due_ && enc_.add_ping(static_cast<uint16_t>(ttl_ds), {}))
        ping_due_ = false;
}

// Transform path: PING/PONG go inside protected frames with the command bit, as
// libzmq sends them over CURVE.
void engine_t::add_sealed_heartbeats(uint16_t ttl_ds) {
    while (!pongs_.empty()) {
        std::vector<uint8_t> pong{4, 'P', 'O', 'N', 'G'};
        pong.insert(pong.end(), pongs_.front().begin(), pongs_.front().end());
        if (!seal_command(pong))
            break;
        pongs_.pop_front();
    }
    if (ping_due_) {
        const std::vector<uint8_t> ping{4, 'P', 'I', 'N', 'G', static_cast<uint8_t>(ttl_ds >> 8),
                                        static_cast<uint8_t>(ttl_ds & 0xff)};
        ping_due_ = !seal_command(ping);
    }
}

bool engine_t::seal_command(std::span<const uint8_t> body) {
    if (tf_->seal(wire::frame_flag::command, body, sealed_) == wire::wire_error::none)
        return true;
    fail("seal failed", 0);
    return false;
}

// false: does not fit this batch (m untouched).  On success m is consumed:
// closed, or kept in in_flight_ while the encoder references its body.
bool engine_t::add_frame(msg_t &m) {
    const bool more = m.has_more();
    auto body = bytes_of(m);
    const bool sub_side = opts_.type == ZMQ_SUB || opts_.type == ZMQ_XSUB;
    bool ok;
    if (tf_)
        ok = add_sealed(m);
    else if (sub_side && !out_more_ && !more && !body.empty() && body[0] <= 1)
        ok = enc_.add_subscription(body[0] == 1, body.subspan(1), peer_version_);
    else
        ok = enc_.add(body, more);
    if (!ok)
        return false;
    out_more_ = more;
    if (!tf_ && m.size() > wire::frame_encoder::default_copy_threshold) {
        in_flight_.push_back(m);  // referenced by the encoder until written
        m.init();
    } else
        m.close();
    return true;
}

// Transform path: the sealed frame is appended to this batch's byte run.
// A SUB/XSUB's subscription message (\x01/\x00 + topic) goes as a sealed
// SUBSCRIBE/CANCEL command to a ZMTP 3.1 peer, as libzmq sends it.
bool engine_t::add_sealed(msg_t &m) {
    if (!sealed_.empty() && sealed_.size() + m.size() > out_size_.now())
        return false;
    auto body = bytes_of(m);
    const bool sub_side = opts_.type == ZMQ_SUB || opts_.type == ZMQ_XSUB;
    if (sub_side && !out_more_ && !m.has_more() && !body.empty() && body[0] <= 1 &&
        peer_version_.has_subscribe_commands()) {
        const std::string_view name = body[0] == 1 ? "\x09" "SUBSCRIBE" : "\x06" "CANCEL";
        std::vector<uint8_t> cmd(name.begin(), name.end());
        cmd.insert(cmd.end(), body.begin() + 1, body.end());
        seal_command(cmd);
        return true;  // m is consumed by the caller either way
    }
    const uint8_t flags = m.has_more() ? wire::frame_flag::more : 0;
    if (tf_->seal(flags, body, sealed_) != wire::wire_error::none)
        fail("seal failed", 0);  // m is still consumed by the caller
    return true;
}

// Sends the batch from where its bytes are (no copy).  true: all written.
// false: the socket buffer is full (writing_ set, the rest goes when it is
// writable) or the connection failed.
bool engine_t::write_batch() {
    // 0 = no cap: the whole gather list goes to one sendmsg when the kernel takes it.
    const size_t cap = opts_.max_transfer > 0 ? static_cast<size_t>(opts_.max_transfer) : 0;
    while (!gather_.empty()) {
        std::error_code ec;
        // A batch's first write: the rule's cap, or the knob's when that is smaller.
        const size_t first = first_write_pending_ && opts_.first_write > 0
                                 ? first_write_cap(opts_.first_write, gather_.pending_bytes(), more_waiting_)
                                 : 0;
        gather_.write_to(sock_.native_handle(), first > 0 && (cap == 0 || first < cap) ? first : cap, ec);
        if (ec == std::errc::resource_unavailable_try_again) {
            wait_writable();  // nothing went: the first write is still to come
            return false;
        }
        first_write_pending_ = false;
        if (ec) {
            fail("write failed", 0);
            return false;
        }
    }
    batch_written();
    return true;
}

// Asks the host whether a frame waits behind the batch, without taking it:
// the frame is pulled and handed straight back (engine_host::return_frame).
bool engine_t::host_has_frame() {
    msg_t next;
    if (stopped_ || !host_->pull_frame(next))
        return false;
    host_->return_frame(next);
    return true;
}

void engine_t::wait_writable() {
    writing_ = true;
    sock_.async_wait(asio::socket_base::wait_write,
                     [self = shared_from_this()](const asio::error_code &ec) {
                         self->writing_ = false;
                         if (self->stopped_)
                             return;
                         if (ec)
                             return self->fail("write failed", 0);
                         if (self->write_batch())
                             self->pump_out();
                     });
}

void engine_t::yield_output() {
    writing_ = true;  // nobody else writes until this turn comes
    asio::post(sock_.get_executor(), [self = shared_from_this()] {
        self->writing_ = false;
        self->pump_out();
    });
}

// The batch is on the wire: the encoder's staging run and the referenced
// bodies are free again.
void engine_t::batch_written() {
    if (!raw_)
        enc_.consume(enc_.pending_bytes());
    sealed_.clear();
    release_in_flight();
}

void engine_t::release_in_flight() {
    for (auto &m : in_flight_)
        m.close();
    in_flight_.clear();
}

// ----------------------------------------------------------------- heartbeats

void engine_t::arm_heartbeat() {
    const int tick = opts_.heartbeat_ivl > 0
                         ? opts_.heartbeat_ivl
                         : (peer_ttl_ms_ > 0 ? std::max(peer_ttl_ms_ / 2, 1) : 0);
    if (tick <= 0 || raw_ || !ready_ || stopped_)
        return;
    // Armed while handling a receive (the peer's READY or a PING with a TTL), so
    // that receive is the last one; from here on every read is stamped.
    if (!watching_silence_) {
        watching_silence_ = true;
        last_recv_ = steady::now();
    }
    heartbeat_timer_.expires_after(std::chrono::milliseconds(tick));
    heartbeat_timer_.async_wait([self = shared_from_this()](const asio::error_code &ec) {
        if (!ec && !self->stopped_)
            self->on_heartbeat();
    });
}

// Drops a silent peer (HEARTBEAT_TIMEOUT, or the TTL the peer announced);
// otherwise sends a PING when we have an interval.
void engine_t::on_heartbeat() {
    const auto idle =
        std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - last_recv_).count();
    const int timeout =
        opts_.heartbeat_timeout >= 0 ? opts_.heartbeat_timeout : opts_.heartbeat_ivl;
    if ((opts_.heartbeat_ivl > 0 && timeout > 0 && idle > timeout) ||
        (peer_ttl_ms_ > 0 && idle > peer_ttl_ms_))
        return fail("heartbeat timeout", ZMQ_EVENT_DISCONNECTED);
    if (opts_.heartbeat_ivl > 0) {
        ping_due_ = true;
        pump_out();
    }
    arm_heartbeat();
}

}  // namespace zlink
