// engine_output: the sending side of one connection (engine_t).  It pulls
// frames from the host into a batch (small frames copied into the encoder's
// staging run, large bodies referenced in place), writes the batch with
// non-blocking sendmsg() calls straight from where its bytes live (the
// gather_list), batch after batch, a bounded number per turn, and waits for
// writability only when the socket buffer is full.  It also writes the
// handshake's bytes, and carries the PINGs and PONGs the lifecycle queues.
//
// The batch is as large as out_size_ says (transport/batch_size.hpp); its
// first write may be capped (transport/write_cap.hpp), or, for a tcp loopback
// peer on other CPUs, be 8 KiB with the rest after one trip through epoll
// (transport/peer_pause.hpp), or, where the connection paces, go short piece
// first (transport/paced_split.hpp); the application's own writes of large
// messages (core/direct_send.hpp) are cut the same way.  Over ipc to a peer on
// other CPUs the IO thread is woken whenever the peer drains the socket
// (transport/drain_wake.hpp).
#pragma once
#include <asio/posix/stream_descriptor.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/direct_send.hpp"
#include "core/gather_list.hpp"
#include "core/msg.hpp"
#include "core/options.hpp"
#include "transport/batch_size.hpp"
#include "transport/drain_wake.hpp"
#include "transport/paced_split.hpp"
#include "transport/peer_pause.hpp"
#include "wire/frame_encoder.hpp"

namespace zlink {

class engine_t;

// What the output is waiting for; anything but idle means nobody else writes.
enum class write_state : std::uint8_t {
    idle,       // free: pump() may fill and write a batch
    handshake,  // handshake bytes are being written (asio::async_write)
    writable,   // a batch waits for the socket to take more
    yielded,    // the rest of this turn's output is posted
    broken,     // a write failed: nothing more is written (engine_t::write_failed)
};

class engine_output {
public:
    engine_output(engine_t &engine, const options_t &opts);
    ~engine_output();
    engine_output(const engine_output &) = delete;
    engine_output &operator=(const engine_output &) = delete;

    // Writes batch after batch while the host has frames and the kernel takes them.
    void pump();
    // Sends what is queued, then stops the engine (close_after_flush()).
    void close_when_drained() noexcept { close_after_flush_ = true; }

    // Queued for the next batch: a PONG with the PING's context (bounded: a
    // peer pinging faster than we write loses its oldest answers), a PING.
    void queue_pong(std::span<const std::uint8_t> context);
    void queue_ping() noexcept { ping_due_ = true; }
    // A write failed: from now on pump() writes nothing.
    void mark_broken() noexcept { write_ = write_state::broken; }
    // Closes the descriptor write waits go through (write_waiter()), cancelling a
    // wait in progress; the engine calls it when it stops.
    void drop_write_waiter() noexcept;
    // Ends direct writes by the application (core/direct_send.hpp); the engine
    // calls it before it closes the descriptor.
    void detach_direct() noexcept;
    bool closing_when_drained() const noexcept { return close_after_flush_; }

    write_state writing() const noexcept { return write_; }
    std::size_t batch_bytes() const noexcept { return out_size_.now(); }

    static constexpr std::size_t max_pending_pongs = 16;
    // Sealed (CURVE) frames larger than a batch share one batch up to this many
    // bytes when they are queued together (add_sealed).
    static constexpr std::size_t sealed_run_bytes = 1024 * 1024;

private:
    void write_handshake();
    bool fill_batch();
    bool fill_raw_batch();
    bool add_frame(msg_t &m);
    bool add_sealed(msg_t &m);
    void add_heartbeats();
    void add_sealed_heartbeats(uint16_t ttl_ds);
    bool seal_command(std::span<const uint8_t> body);
    bool write_batch();
    std::size_t write_cap() const noexcept;
    std::size_t first_write(std::size_t bytes, bool more_waiting, bool pausing);
    direct_send::cut direct_cut(std::size_t bytes);
    bool host_has_frame();
    bool pause_for_peer();
    void arm_drain_wake();
    void wait_writable();
    asio::posix::stream_descriptor *write_waiter();
    void yield();
    void batch_written();
    void release_in_flight();
    void sync_direct();
    bool direct_eligible() const;
    bool claim_direct();

    engine_t &e_;
    wire::frame_encoder enc_;
    batch_size out_size_;          // the next write batch's bytes
    std::size_t batch_limit_ = 0;  // the batch being filled stops at this many bytes
    write_state write_ = write_state::idle;
    // The batch's first sendmsg is still to come, and whether more frames
    // waited behind it: they decide its cap (transport/write_cap.hpp).
    bool first_write_pending_ = false;
    bool more_waiting_ = false;
    // This batch's first write is 8 KiB and the rest waits for writability
    // (transport/peer_pause.hpp); where the peer runs, looked up now and then.
    bool pause_after_first_ = false;
    peer_placement peer_;
    paced_split paced_;              // tcp: this connection's pacing, looked up now and then
    bool drain_wake_armed_ = false;  // for good: epoll keeps the interest (drain_wake.hpp)
    // Over ipc, unless the drain wake is armed: a duplicate of the socket's descriptor
    // that waits for writability while the output is busy, closed when it goes
    // idle, so the socket itself never gets write interest (wait_writable()).
    asio::posix::stream_descriptor write_wait_fd_;
    bool out_more_ = false;  // the last frame added had MORE
    bool close_after_flush_ = false;
    std::vector<msg_t> in_flight_;      // bodies the gather list references
    gather_list gather_;                // the batch's unwritten bytes
    std::vector<std::uint8_t> sealed_;  // transform: sealed frames of this batch
    std::deque<std::string> pongs_;     // contexts of PINGs not yet answered
    // Where the application may write large messages itself while this output is
    // idle (core/direct_send.hpp); null where it may not.
    std::shared_ptr<direct_send> direct_;
    std::vector<std::uint8_t> direct_small_;  // small frames of its rest (claim_direct)
    bool ping_due_ = false;
};

}  // namespace zlink
