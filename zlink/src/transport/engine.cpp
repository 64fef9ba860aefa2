#include "transport/engine.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "wire/command.hpp"
#include "wire/error.hpp"
#include "wire/mechanism.hpp"
#include "wire/zap.hpp"
#include "zmq.h"

namespace zlink {

namespace {
using steady = std::chrono::steady_clock;
using ms = std::chrono::milliseconds;

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
    : sock_(std::move(sock)), opts_(opts), host_(&host), hs_(std::move(hs)), raw_(!hs_),
      input_(*this, opts), output_(*this, opts), handshake_timer_(sock_.get_executor()),
      heartbeat_timer_(sock_.get_executor()) {}

engine_t::~engine_t() = default;

// ------------------------------------------------------------------ lifecycle

void engine_t::start() {
    auto self = shared_from_this();
    if (raw_) {
        phase_ = engine_phase::ready;
        host_->engine_ready(peer_info{});
    } else
        arm_handshake_timer();
    output_.pump();
    input_.start_read();
}

void engine_t::terminate() {
    if (stopped())
        return;
    phase_ = engine_phase::stopped;
    output_.detach_direct();  // the application writes no more to the descriptor
    asio::error_code ignore;
    sock_.shutdown(asio::socket_base::shutdown_both, ignore);
    sock_.close(ignore);
    output_.drop_write_waiter();  // a duplicate of the descriptor (engine_output::wait_writable)
    handshake_timer_.cancel();
    heartbeat_timer_.cancel();
}

void engine_t::stop(engine_end why) {
    if (stopped())
        return;
    terminate();
    host_->engine_stopped(why);
}

void engine_t::fail(const char *reason, int event, int value) {
    stop(engine_end{ready(), event, value, false, reason, held()});
}

// A read that ends the connection. Its value is the errno libzmq 4.3.5 reports with
// HANDSHAKE_FAILED_NO_DETAIL when this happens mid-handshake: EPIPE for the end of
// the stream (libzmq's read turns 0 bytes into EPIPE), else the socket's error.
void engine_t::fail_read(const asio::error_code &ec) {
    // The handshake already failed and our ERROR is on its way: a peer that
    // read it and hung up ends the connection with that failure (e.g. ZAP's
    // 400), not as a hang-up.  Reads can see the EOF before our write's
    // completion runs (the read loop is posted, not woken by the reactor).
    if (phase_ == engine_phase::failing)
        return stop(failing_);
    const bool eof = ec == asio::error::eof;
    const bool system = ec.category() == asio::system_category();
    fail(eof ? "peer closed the connection" : "read failed", 0,
         eof      ? EPIPE
         : system ? ec.value()
                  : 0);
}

// A write failed: the connection is gone, but what the peer sent before it went
// may still wait in our receive buffer (a peer that closed while we were frozen
// and answered our PING with a reset: tests/faults/frozen_peer_test.cpp). Once
// ready, stop writing and let the read side end the connection when it reaches
// the end of those bytes, as libzmq's stream engine does ("the engine is not
// terminated until we detect input error; this is necessary to prevent losing
// incoming messages"). Before that, and when only a flush was left to do,
// nothing is lost by ending now.
void engine_t::write_failed() {
    if (!ready() || output_.closing_when_drained())
        return fail("write failed", 0);
    output_.mark_broken();
}

void engine_t::close_after_flush() {
    auto self = shared_from_this();
    if (stopped())
        return;
    output_.close_when_drained();
    if (!ready())
        return stop(engine_end{false, 0, 0, true, "closed before the handshake"});
    if (output_.writing() == write_state::broken)
        return fail("write failed", 0);  // nothing can be flushed any more
    output_.pump();
}

void engine_t::restart_input() {
    auto self = shared_from_this();
    input_.restart();
}

void engine_t::restart_output() {
    auto self = shared_from_this();
    if (!stopped())
        output_.pump();
}

// ------------------------------------------------------------------ handshake

void engine_t::arm_handshake_timer() {
    if (opts_.liveness.handshake_ivl <= 0)
        return;
    // A peer that never completes the handshake must not hold a connection.
    handshake_timer_.expires_after(std::chrono::milliseconds(opts_.liveness.handshake_ivl));
    handshake_timer_.async_wait([self = shared_from_this()](const asio::error_code &ec) {
        if (!ec && !self->stopped() && !self->ready())
            self->fail("handshake timeout", ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL);
    });
}

// Feeds buffered bytes to the handshake until it is done, failed, waiting for
// ZAP, or out of bytes.
void engine_t::advance_handshake() {
    in_handshake_ = true;
    for (;;) {
        input_.chunk().consume(hs_->feed(input_.chunk().buffered()));
        if (hs_->failed()) {
            in_handshake_ = false;
            return handshake_failed();
        }
        const wire::zap_request *zap = hs_->zap_pending();
        if (!zap || zap_asked_)
            break;
        zap_asked_ = true;
        host_->zap_request(*zap);  // may answer at once (zap_answer re-enters here)
        if (stopped())
            return;
    }
    in_handshake_ = false;
    output_.pump();  // our READY, once the greeting was accepted
    if (stopped())
        return;
    if (hs_->zap_pending()) {
        // Waiting for zap_answer(), still reading: a peer that hangs up meanwhile
        // ends the connection now with EPIPE, as in libzmq 4.3.5 (a handler that
        // never answers must not hold it until HANDSHAKE_IVL). Bytes the peer
        // sends after its handshake wait undecoded; once a whole input batch of
        // them is buffered, reading waits for the answer too (memory bounded).
        if (input_.under_one_batch())
            input_.start_read();
        return;
    }
    if (hs_->done())
        return handshake_done();
    input_.start_read();
}

void engine_t::zap_answer(const wire::zap_reply &reply) {
    auto self = shared_from_this();
    if (stopped() || !hs_)
        return;
    hs_->zap_answer(reply);
    zap_asked_ = false;
    if (!in_handshake_)
        advance_handshake();
}

void engine_t::zap_failed(wire::wire_error error) {
    auto self = shared_from_this();
    if (stopped() || !hs_ || ready())
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
    phase_ = engine_phase::failing;
    output_.pump();
}

// Handshake bytes are on the wire: a failing handshake ends once its ERROR
// is out; otherwise output goes on (more handshake, or frames once ready).
void engine_t::handshake_written(std::size_t n) {
    hs_->consume_outgoing(n);
    if (phase_ == engine_phase::failing && hs_->outgoing().empty())
        return stop(failing_);
    output_.pump();
}

// A ZAP 300 (temporary failure): as libzmq 4.3.5 does, send nothing more and keep
// the connection open until the handshake timer (HANDSHAKE_IVL) or the peer ends
// it. Closing at once would make the peer reconnect and ask again in a loop.
void engine_t::hold_refused(int event, int value) {
    phase_ = engine_phase::held;
    host_->handshake_refused(event, value);
    input_.start_read();  // to notice the hang-up; whatever the peer sends is dropped
}

void engine_t::handshake_done() {
    handshake_timer_.cancel();
    phase_ = engine_phase::ready;
    peer_version_ = hs_->peer_version();
    tf_ = hs_->transform();
    peer_info peer;
    peer.socket_type = static_cast<int>(hs_->peer_socket_type());
    auto id = hs_->peer_routing_id();
    peer.routing_id.assign(reinterpret_cast<const char *>(id.data()), id.size());
    peer.metadata = hs_->peer_metadata();
    peer.user_id = hs_->user_id();
    host_->engine_ready(peer);
    if (stopped())
        return;
    arm_heartbeat();
    input_.process_input();  // frames that came with the peer's READY
    output_.pump();
}

// ----------------------------------------------------------------- heartbeats

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
    output_.queue_pong(ctx);
    if (ttl > 0 && peer_ttl_ms_ == 0) {
        peer_ttl_ms_ = ttl * 100;
        arm_heartbeat();
    }
    output_.pump();
}

void engine_t::arm_heartbeat() {
    const bool pinging = opts_.liveness.heartbeat_ivl > 0;
    if ((!pinging && peer_ttl_ms_ == 0) || raw_ || !ready() || stopped())
        return;
    // Armed while handling a receive (the peer's READY or a PING with a TTL), so
    // that receive is the last one; from here on every read is stamped.
    const auto now = steady::now();
    if (!watching_silence_) {
        watching_silence_ = true;
        last_recv_ = now;
        next_ping_ = now + ms(opts_.liveness.heartbeat_ivl);
    }
    // Wake for the next PING or the moment a silence limit would pass, whichever
    // comes first. Checked only at PING ticks, a peer's TTL was honoured up to one
    // interval late (libzmq runs it as a timer of its own from the peer's PING).
    auto wake = pinging ? next_ping_ : steady::time_point::max();
    if (const auto t = timeout_deadline())
        wake = std::min(wake, *t);
    if (peer_ttl_ms_ > 0)
        wake = std::min(wake, last_recv_ + ms(peer_ttl_ms_) + ms(1));
    heartbeat_timer_.expires_at(std::max(wake, now));
    heartbeat_timer_.async_wait([self = shared_from_this()](const asio::error_code &ec) {
        if (!ec && !self->stopped())
            self->on_heartbeat();
    });
}

// HEARTBEAT_TIMEOUT counts from the first PING sent after the last bytes heard
// (libzmq: "after sending a PING and not receiving any traffic"), so an idle but
// live peer always has the whole timeout to answer; none while no PING waits.
std::optional<steady::time_point> engine_t::timeout_deadline() const {
    const int timeout = opts_.liveness.heartbeat_timeout >= 0 ? opts_.liveness.heartbeat_timeout
                                                              : opts_.liveness.heartbeat_ivl;
    if (opts_.liveness.heartbeat_ivl <= 0 || timeout <= 0 || !ping_unanswered_ ||
        last_recv_ > unanswered_ping_at_)
        return std::nullopt;
    return unanswered_ping_at_ + ms(timeout) + ms(1);
}

// Drops a silent peer (HEARTBEAT_TIMEOUT after our unanswered PING, or the TTL
// the peer announced since its last bytes); otherwise sends a PING when one is
// due. Bytes waiting in the socket mean the peer was not silent, this process
// was (stopped, or not scheduled): they count as heard now, so what they hold is
// read before anything is judged (libzmq arms its timeout only after a PING and
// cancels it on any message, so a resumed process reads first there too:
// tests/faults/frozen_peer_test.cpp).
void engine_t::on_heartbeat() {
    asio::error_code ignore;
    const auto now = steady::now();
    if (sock_.available(ignore) > 0)
        last_recv_ = now;
    const auto timeout = timeout_deadline();
    if ((timeout && now >= *timeout) || (peer_ttl_ms_ > 0 && now - last_recv_ > ms(peer_ttl_ms_)))
        return fail("heartbeat timeout", ZMQ_EVENT_DISCONNECTED);
    if (opts_.liveness.heartbeat_ivl > 0 && now >= next_ping_) {
        next_ping_ = now + ms(opts_.liveness.heartbeat_ivl);
        if (!ping_unanswered_ || last_recv_ > unanswered_ping_at_) {
            ping_unanswered_ = true;  // the first PING since we last heard the peer
            unanswered_ping_at_ = now;
        }
        output_.queue_ping();
        output_.pump();
    }
    arm_heartbeat();
}

}  // namespace zlink
