// engine_input: the receiving side of one connection (engine_t).  It reads
// the socket with non-blocking recv() calls of its own into the receive chunk
// (or straight into a large body), decodes frames, handles the commands that
// arrive between messages, and pushes messages to the host with one
// flush_frames() per read.
//
// Why its own reads: an Asio read operation costs an operation object, the
// reactor's descriptor lock and a trip through the scheduler per read; a
// 256 KiB message takes several reads, and callgrind counted that machinery at
// ~4,400 instructions per message over ipc (docs/profiling/2026-11-24-direct-reads.md).
// Asio only waits for readability once the socket is empty.
//
// Wake-ups: while a large message is in flight (the read filled the rest of a
// body in place, or filled the chunk and left a large body's rest to be read in
// place next) more bytes are probably queued and the loop reads again at once;
// what the read completed is published, but the socket is woken only when a
// read comes back short, a read carries only small messages, or the loop ends
// (flush_frames(more_coming)).  Waking the application thread per large
// message made it preempt this thread (they share a CPU in one-core and split
// placement), take one message and sleep again: at 256 KiB over tcp, split,
// the receiving application slept 0.87 times and the IO thread was preempted
// 0.77 times per message (docs/profiling/2026-12-02-large-path.md).  Reads of
// small messages wake per read as before: that wakes the socket about once per
// 80-500 messages already, and a reader woken on another core starts on the
// first chunk while this thread reads the next
// (docs/profiling/2026-12-02-wakeups.md).  A lone message still wakes the
// socket at once: its read is short, or the next read finds the socket empty.
//
// It belongs to its engine and calls it back for what is not about reading:
// the handshake (bytes before it is done), failures, PINGs (heartbeats live in
// the lifecycle, engine.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include <asio/buffer.hpp>
#include <asio/error_code.hpp>

#include "core/msg.hpp"
#include "core/options.hpp"
#include "transport/batch_size.hpp"
#include "transport/receive_chunk.hpp"
#include "wire/frame_decoder.hpp"

namespace zlink {

class engine_t;

// Whether a read is owed to the engine, and by whom it will be done.
enum class read_state : std::uint8_t {
    idle,          // none: input blocked, waiting on the host or the handshake
    owed,          // read_loop() is posted, or waits for readability
    looping,       // read_loop() is on the stack; this read's input asked no more
    looping_owed,  // read_loop() is on the stack and another read is asked for
};

// The decoded frame the input holds, not yet taken.
enum class held_frame : std::uint8_t {
    none,
    message,  // for the host (push_frame refused it: input is blocked)
    command,  // still to be handled here (it may become a message: SUBSCRIBE)
};

class engine_input {
public:
    engine_input(engine_t &engine, const options_t &opts);
    ~engine_input();
    engine_input(const engine_input &) = delete;
    engine_input &operator=(const engine_input &) = delete;

    // Asks for a read: posts the read loop (never reads inline: callers, e.g.
    // the session restarting input, do not expect frames pushed back at them
    // from inside the call); from inside the loop only tells it to go on.
    void start_read();
    // The host takes frames again.
    void restart();
    // Decodes what is buffered, publishes it with one flush, reads on.
    void process_input();
    // STREAM: every read is one message of raw bytes.
    void process_raw_input();

    // The handshake's view of the buffered bytes.
    receive_chunk &chunk() noexcept { return chunk_; }
    // Less than one input batch waits undecoded (reading may go on while the
    // handshake waits for ZAP: memory stays bounded).
    bool under_one_batch() const noexcept { return chunk_.pending() < in_size_.now(); }

    read_state reading() const noexcept { return read_; }
    bool blocked() const noexcept { return blocked_; }
    std::size_t batch_bytes() const noexcept { return in_size_.now(); }

private:
    void read_loop();
    void wait_readable();
    asio::mutable_buffer next_read_buffer();
    bool next_read_in_place() const;
    void on_read(const asio::error_code &ec, std::size_t n);
    bool decode_frames();
    bool begin_body();
    void frame_complete();
    void open_frame();
    bool deliver_frame();
    bool handle_command();

    static constexpr int reads_per_turn = 16;

    engine_t &e_;
    wire::frame_decoder dec_;
    batch_size in_size_;  // the next read's bytes (transport/batch_size.hpp)
    receive_chunk chunk_;
    read_state read_ = read_state::idle;
    bool blocked_ = false;        // push_frame refused: wait for restart()
    bool body_in_place_ = false;  // the current read targets a message body
    held_frame held_ = held_frame::none;
    msg_t in_msg_;                     // the frame being decoded, or held
    std::size_t read_room_ = 0;        // bytes the pending chunk read asked for
    std::size_t read_bytes_ = 0;       // ... and got: judged after it is decoded
    std::size_t asked_ = 0;            // bytes the last read asked for (chunk or body)
    bool last_read_full_ = false;      // ... and it got them all: more may be queued
    bool last_read_in_place_ = false;  // ... and it was a large body's rest
    bool wake_deferred_ = false;       // a flush in this loop let the wake-up wait
    std::size_t frames_in_ = 0;        // frames decoded, ever (per-read counts)
};

}  // namespace zlink
