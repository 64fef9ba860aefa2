// Incremental ZMTP 3.x frame decoder.
//
// The decoder never owns a body: when a header is complete it hands the size to the
// caller, who supplies the destination (a message body: inline for small frames, a
// reference-counted block for large ones). Bytes are copied from the caller's read
// buffer into that destination, or - for large bodies - the caller reads from the
// socket straight into body_remaining(), so a 1 MiB frame is never staged twice.
// No allocation, no exceptions.
//
// Typical engine loop over a read buffer `in`:
//
//   for (;;) {
//       std::size_t used = 0;
//       auto s = dec.decode(in, used);
//       in = in.subspan(used);
//       if (s == frame_decoder::step::header) { msg = alloc(dec.header().size);
//                                               dec.set_body(msg.body()); }
//       else if (s == frame_decoder::step::frame)  deliver(msg, dec.header());
//       else if (s == frame_decoder::step::error)  close(to_string(dec.error()));
//       else break;  // need_more: `in` is empty; if dec.body_remaining() is large,
//                    // read into it directly, then call dec.body_filled(n)
//   }
#pragma once

#include "wire/error.hpp"
#include "wire/frame.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

namespace zlink::wire {

class frame_decoder {
public:
    static constexpr std::uint64_t unlimited = std::numeric_limits<std::uint64_t>::max();

    enum class step : std::uint8_t {
        need_more,  // all input consumed, no event yet
        header,     // header() is complete; call set_body() before decoding on
        frame,      // the current frame's body is complete in the caller's buffer
        error,      // error() says why; the decoder stays failed (close the connection)
    };

    // `max_body_size`: frames whose body exceeds this fail with frame_too_large
    // before any body octet is accepted (ZMQ_MAXMSGSIZE, applied per frame as
    // libzmq does). Applies to message and command frames alike.
    explicit frame_decoder(std::uint64_t max_body_size = unlimited) noexcept;

    // Consumes octets of `in` until one event happens; `consumed` receives how many
    // were taken. Returns `frame` with consumed == 0 when a body was already complete
    // (e.g. a zero-size frame after set_body()). Errors: reserved_flags_set,
    // command_with_more, frame_too_large, frame_size_overflow.
    step decode(std::span<const std::uint8_t> in, std::size_t &consumed) noexcept;

    // The header of the frame in progress; valid from the `header` event until the
    // next header starts.
    const frame_header &header() const noexcept { return header_; }

    // Supplies the body destination after a `header` event. `dst.size()` must equal
    // header().size (an empty span for a zero-size frame). The memory must stay
    // valid until the `frame` event.
    void set_body(std::span<std::uint8_t> dst) noexcept;

    // Zero-copy path for a body that is already in the input: after a `header`
    // event, instead of set_body(), the caller takes the body octets from its own
    // input buffer (e.g. a message pointing into a shared receive buffer); decode()
    // then consumes header().size octets without copying them and returns `frame`.
    void skip_body() noexcept;

    // Zero-copy path: the not yet filled tail of the body destination (empty when no
    // body is in progress). The caller may read socket data directly into it and must
    // then call body_filled(n) with the number of octets it wrote there.
    std::span<std::uint8_t> body_remaining() const noexcept;
    // Returns `frame` when that completed the body, else `need_more`.
    step body_filled(std::size_t n) noexcept;

    wire_error error() const noexcept { return error_; }

    // Bytes of the current header still missing (1 before any flags octet). Useful to
    // size small reads; purely informational.
    std::size_t header_bytes_missing() const noexcept;

private:
    enum class state : std::uint8_t { flags, size, await_body, body, skip, complete, failed };

    step fail(wire_error e) noexcept;
    step header_complete() noexcept;

    std::uint64_t max_body_;
    frame_header header_{};
    state state_ = state::flags;
    std::uint8_t size_bytes_ = 0;  // size octets still expected (1 or 8 when reading size)
    std::span<std::uint8_t> body_{};
    std::size_t filled_ = 0;
    wire_error error_ = wire_error::none;
};

}  // namespace zlink::wire
