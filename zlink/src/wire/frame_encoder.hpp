// Batching ZMTP 3.x frame encoder producing a scatter/gather list.
//
// Many small frames become one contiguous run in a staging buffer (one write
// syscall for a batch); a body above `copy_threshold` is not copied but referenced
// in place as its own gather entry, so large messages go to the kernel straight from
// the message body. Storage is allocated once in the constructor; add() never
// allocates.
//
// Engine loop:
//   while (have messages && enc.add(body, more)) pop;      // fill a batch
//   write_some(enc.buffers()) -> n; enc.consume(n);        // partial writes are fine
//   release the messages of the batch once enc.empty()     // bodies referenced
//                                                           // in place are read until then
#pragma once

#include "wire/greeting.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace zlink::wire {

// Plain pointer + length; the IO layer maps it to asio::const_buffer / iovec.
struct const_buffer {
    const std::uint8_t *data = nullptr;
    std::size_t size = 0;
};

class frame_encoder {
public:
    static constexpr std::size_t default_staging = 8192;
    static constexpr std::size_t default_copy_threshold = 256;
    static constexpr std::size_t default_max_buffers = 64;  // well under IOV_MAX

    // `staging_capacity` is raised to fit at least one header plus one copied body
    // (max_header_size + copy_threshold + 256 for command prefixes); `max_buffers`
    // to at least 3 (staging, body, staging).
    explicit frame_encoder(std::size_t staging_capacity = default_staging,
                           std::size_t copy_threshold = default_copy_threshold,
                           std::size_t max_buffers = default_max_buffers);

    // Appends one message frame. Returns false, appending nothing, when the frame
    // does not fit the current batch; write out and consume() first. Any frame fits
    // an empty batch. Bodies larger than copy_threshold are referenced, not copied.
    bool add(std::span<const std::uint8_t> body, bool more) noexcept;

    // Appends a command frame: name (1-255 ALPHA, e.g. "PING") then `data`.
    // Same fit rule and referencing rule as add().
    bool add_command(std::string_view name, std::span<const std::uint8_t> data) noexcept;

    // Appends a subscription (subscribe=true) or cancellation for `topic` in the form
    // the peer understands: a SUBSCRIBE/CANCEL command for ZMTP >= 3.1, a one-frame
    // message whose body is %x01/%x00 followed by the topic for ZMTP 3.0.
    bool add_subscription(bool subscribe, std::span<const std::uint8_t> topic,
                          zmtp_version peer) noexcept;

    // PING with TTL in tenths of a second and 0..16 context octets; PONG echoing a
    // context. Return false when the batch is full or the context is over 16 octets.
    bool add_ping(std::uint16_t ttl_deciseconds, std::span<const std::uint8_t> context) noexcept;
    bool add_pong(std::span<const std::uint8_t> context) noexcept;

    // Appends pre-encoded octets (e.g. the handshake's outgoing bytes), copied.
    // Fails when they exceed the free staging space.
    bool add_raw(std::span<const std::uint8_t> bytes) noexcept;

    // The pending bytes in wire order. Valid until the next add()/consume().
    std::span<const const_buffer> buffers() const noexcept;
    std::size_t pending_bytes() const noexcept { return pending_; }
    bool empty() const noexcept { return pending_ == 0; }

    // Gives the staging area a new capacity (raised as the constructor raises
    // it), for a batch size that changes between batches.  Only while empty():
    // returns false, changing nothing, when bytes are pending.
    bool resize_staging(std::size_t staging_capacity);
    std::size_t staging_capacity() const noexcept { return staging_capacity_; }

    // Drops the first n (<= pending_bytes()) octets after they were written. When
    // the batch is fully written the staging buffer is reused from the start.
    void consume(std::size_t n) noexcept;

private:
    bool add_frame(std::uint8_t flags_more, bool command, std::span<const std::uint8_t> prefix,
                   std::span<const std::uint8_t> body) noexcept;
    void append_staged(const std::uint8_t *p, std::size_t n) noexcept;
    void append_reference(const std::uint8_t *p, std::size_t n) noexcept;

    std::unique_ptr<std::uint8_t[]> staging_;
    std::size_t staging_capacity_;
    std::size_t staging_used_ = 0;
    std::size_t copy_threshold_;
    std::unique_ptr<const_buffer[]> bufs_;
    std::size_t max_buffers_;
    std::size_t first_ = 0;    // first gather entry not fully written
    std::size_t count_ = 0;    // gather entries in use
    std::size_t pending_ = 0;  // bytes not yet consumed
};

}  // namespace zlink::wire
