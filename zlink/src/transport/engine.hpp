// engine_t: one tcp/ipc connection, bytes <-> frames.  A fresh engine is
// made for every connection (accepted, or made by the connecter) and is done
// when the connection is; nothing in it survives a reconnect.
//
// It owns the stream socket, the handshake (a wire::handshake from the
// handshake factory; the engine never names a mechanism), the frame decoder
// and encoder, batching and heartbeats.  Everything about pipes, linger,
// monitor events and reconnecting belongs to its host, the session.
//
// Split by job: engine_input (transport/engine_input.hpp: receive chunk, read
// loop, decoder, commands), engine_output (transport/engine_output.hpp: batch,
// gather list, first write, handshake bytes) and, here, the lifecycle: the
// phase of the connection, the handshake's progress and ZAP, heartbeats, and
// how the connection ends.
//
// Data path, chosen for throughput with few syscalls:
//   in:  non-blocking recv() calls of its own (Asio only waits for
//        readability) into the in-batch buffer (adaptive, or
//        ZMQ_ASIO_IN_BATCH_SIZE when set: transport/batch_size.hpp);
//        every complete frame is pushed to the host, then one flush_frames()
//        per read; a run of reads that fill large bodies wakes the socket
//        once, at its end (engine_input.hpp says why).  A large body still
//        missing after the buffered bytes is read by the kernel straight into
//        the message (zero copy).
//   out: frames pulled from the host into the encoder until the out batch
//        (adaptive, or ZMQ_ASIO_OUT_BATCH_SIZE) is full; small frames copied into one
//        staging run, large bodies referenced in place (scatter/gather);
//        the batch goes out by non-blocking sendmsg() at once, batch after
//        batch (a bounded number per turn), and only a full socket buffer
//        waits for writability (gather_list keeps the offset of a partial
//        write); ZMQ_ASIO_TCP_MAX_TRANSFER caps the bytes of one call.
// Back-pressure: when push_frame() refuses (pipe full) the engine keeps the
// frame and stops reading until restart_input(); when pull_frame() has
// nothing, the engine idles until restart_output().
//
// Hooks for what comes next:
//   - Mechanisms (PLAIN, CURVE): add them to make_handshake()
//     (transport/handshake_factory.hpp); the engine only sees wire::handshake.
//   - ZAP: when the handshake publishes zap_pending(), the engine calls
//     engine_host::zap_request() once and waits; the host answers with
//     zap_answer() (now or later), and the handshake goes on.
//   - Frame transforms (CURVE's MESSAGE): after the handshake, when
//     handshake::transform() is non-null, every outgoing frame (messages,
//     PING/PONG, SUBSCRIBE/CANCEL, with the command flag) goes through seal()
//     into one contiguous batch, and every incoming frame through open(); an
//     opened command is handled like one received in clear.
//   - Metadata on received messages: engine_ready() passes the peer's
//     properties (peer_info::metadata) to the host.
#pragma once
#include <algorithm>
#include <asio/generic/stream_protocol.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "core/direct_send.hpp"
#include "core/msg.hpp"
#include "core/options.hpp"
#include "transport/engine_input.hpp"
#include "transport/engine_output.hpp"
#include "wire/handshake.hpp"

namespace zlink {

// What the handshake told us about the peer (valid during engine_ready()).
struct peer_info {
    std::string routing_id;                  // the peer's Identity, possibly empty
    int socket_type = -1;                    // ZMQ_* value, -1 for raw (STREAM)
    std::span<const std::uint8_t> metadata;  // READY properties, ZMTP encoding
    std::string_view user_id;                // ZAP's User-Id (empty without ZAP)
};

// Why a connection ended (engine_host::engine_stopped).
struct engine_end {
    bool handshake_done = false;  // false: the connection never got to traffic
    // For a connection that failed before the handshake finished: the monitor
    // event (ZMQ_EVENT_HANDSHAKE_FAILED_*; 0 = plain hang-up, NO_DETAIL) and
    // its value (ZMQ_PROTOCOL_ERROR_* or 0).
    int event = 0;
    int value = 0;
    bool requested = false;   // the host asked for it (close_after_flush)
    const char *reason = "";  // for logs and tests
    // The handshake's failure was reported already through handshake_refused()
    // (a connection held open after a ZAP 300): no HANDSHAKE_FAILED_* again.
    bool failure_reported = false;
};

// The engine's view of its session.  All calls on the engine's IO thread.
class engine_host {
public:
    virtual ~engine_host() = default;
    // The handshake is done (raw: the connection is up); frames may flow.
    virtual void engine_ready(const peer_info &peer) = 0;
    // One received message frame (msg_t::more set as on the wire).  true:
    // taken (msg left empty).  false: cannot take it now; the engine keeps
    // it, stops reading, and waits for restart_input().
    virtual bool push_frame(msg_t &frame) = 0;
    // End of one read's frames: publish them (one wake-up at most).
    // more_coming: a large message is in flight (engine_input.hpp) and the engine reads again at
    // once, so the wake-up may wait for the end of the run: the next
    // flush_frames(false), which the engine always makes before it waits.
    virtual void flush_frames(bool more_coming) = 0;
    // The next frame to send.  false: nothing now; the engine waits for
    // restart_output().
    virtual bool pull_frame(msg_t &frame) = 0;
    // Gives back the frame pulled last (it did not fit this batch); the next
    // pull_frame() must return it again.
    virtual void return_frame(msg_t &frame) = 0;
    // The handshake asks the ZAP handler; answer with engine_t::zap_answer().
    virtual void zap_request(const wire::zap_request &request) = 0;
    // The handshake failed but the connection stays open (see
    // engine_t::hold_refused): report the monitor event now.
    virtual void handshake_refused(int event, int value) = 0;
    // The connection is over.  Called once; after it the engine never calls
    // the host again, and the host may drop the engine.
    virtual void engine_stopped(const engine_end &why) = 0;
    // Where the application may write large messages to this connection itself
    // (core/direct_send.hpp); null: it never does.  May change between calls (a
    // new pipe).
    virtual const std::shared_ptr<direct_send> &direct_path() {
        static const std::shared_ptr<direct_send> none;
        return none;
    }
};

// Where a connection is in its life.  Each phase says what may flow.
enum class engine_phase : std::uint8_t {
    handshake,  // greeting and handshake bytes only (a raw engine skips it at start())
    failing,    // the handshake failed: our ERROR is being written, then stop
    held,       // refused quietly (ZAP 300): open and mute until timeout or hang-up
    ready,      // frames flow
    stopped,    // the socket is closed; no more host calls
};

class engine_t final : public std::enable_shared_from_this<engine_t> {
public:
    using socket_type = asio::generic::stream_protocol::socket;

    // `hs` is null for a raw (STREAM) connection: no ZMTP, bytes only.
    // `sock` must be connected and non-blocking, already tuned.
    engine_t(socket_type sock, const options_t &opts, std::unique_ptr<wire::handshake> hs,
             engine_host &host);
    ~engine_t();
    engine_t(const engine_t &) = delete;
    engine_t &operator=(const engine_t &) = delete;

    void start();
    // The host can take frames again (after push_frame() refused one).
    void restart_input();
    // The host has frames again (after pull_frame() returned false).
    void restart_output();
    // The ZAP handler's answer to zap_request().
    void zap_answer(const wire::zap_reply &reply);
    // The ZAP exchange itself failed (a reply that breaks RFC 27, or the handler
    // went away): the handshake fails with libzmq's ZMQ_PROTOCOL_ERROR_ZAP_* value.
    void zap_failed(wire::wire_error error);
    // The peer's IP address as libzmq puts it in ZAP requests ("" for ipc).
    std::string peer_address() const;
    // Sends what is queued, pulls until pull_frame() has nothing, then closes;
    // ends with engine_stopped(requested).
    void close_after_flush();
    // Closes now; engine_stopped() is NOT called.  Idempotent.
    void terminate();
    bool stopped() const { return phase_ == engine_phase::stopped; }
    engine_phase phase() const { return phase_; }
    // The two sides, read-only: for tests and diagnostics.
    const engine_input &input() const { return input_; }
    const engine_output &output() const { return output_; }

    // A batch size option as bytes (at least 256).
    static std::size_t batch_bytes(int configured) {
        return static_cast<std::size_t>(std::max(configured, 256));
    }

private:
    friend class engine_input;
    friend class engine_output;

    bool ready() const { return phase_ == engine_phase::ready; }
    bool held() const { return phase_ == engine_phase::held; }
    // lifecycle
    void stop(engine_end why);
    void fail(const char *reason, int event, int value = 0);
    void fail_read(const asio::error_code &ec);
    void write_failed();
    void arm_handshake_timer();
    void advance_handshake();
    void handshake_written(std::size_t n);
    void handshake_failed();
    void hold_refused(int event, int value);
    void handshake_done();
    // heartbeats
    void on_ping(std::span<const std::uint8_t> data);
    void arm_heartbeat();
    void on_heartbeat();
    std::optional<std::chrono::steady_clock::time_point> timeout_deadline() const;
    // Every read stamps the time once a heartbeat timer runs.
    void note_receive() {
        if (watching_silence_)
            last_recv_ = std::chrono::steady_clock::now();
    }

    socket_type sock_;
    options_t opts_;
    engine_host *host_;
    std::unique_ptr<wire::handshake> hs_;  // null: raw
    wire::frame_transform *tf_ = nullptr;  // after the handshake, if the mechanism has one
    const bool raw_;
    engine_phase phase_ = engine_phase::handshake;
    bool zap_asked_ = false;
    bool in_handshake_ = false;  // inside advance_handshake (zap_answer re-entry)
    engine_end failing_;         // phase failing: how to stop once our ERROR is written
    wire::zmtp_version peer_version_{3, 1};

    engine_input input_;
    engine_output output_;

    asio::steady_timer handshake_timer_;
    asio::steady_timer heartbeat_timer_;
    std::chrono::steady_clock::time_point last_recv_;
    // Reads stamp last_recv_ only once a heartbeat timer runs: nothing else reads
    // it, and the clock read was ~20 instructions per read, 2.4 reads per 256 KiB
    // message over tcp (docs/profiling/2026-11-25-level-figures.md).
    bool watching_silence_ = false;
    std::chrono::steady_clock::time_point next_ping_;  // with HEARTBEAT_IVL set
    // The first PING sent since the peer was last heard from (HEARTBEAT_TIMEOUT).
    std::chrono::steady_clock::time_point unanswered_ping_at_;
    bool ping_unanswered_ = false;
    int peer_ttl_ms_ = 0;
};

}  // namespace zlink
