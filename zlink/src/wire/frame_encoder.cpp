// Batching frame encoder: headers and small bodies are staged contiguously; large
// bodies become their own gather entry so they are never copied.
#include "wire/frame_encoder.hpp"

#include "wire/command.hpp"
#include "wire/frame.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace zlink::wire {

namespace {

// Room for the largest command prefix we stage: name-size + 255-octet name.
constexpr std::size_t max_command_prefix = 256;

}  // namespace

frame_encoder::frame_encoder(std::size_t staging_capacity, std::size_t copy_threshold,
                             std::size_t max_buffers)
    : staging_capacity_(0), copy_threshold_(copy_threshold),
      max_buffers_(std::max<std::size_t>(max_buffers, 3)) {
    resize_staging(staging_capacity);
    bufs_ = std::make_unique<const_buffer[]>(max_buffers_);
}

bool frame_encoder::resize_staging(std::size_t capacity) {
    if (!empty())
        return false;
    capacity = std::max(capacity, max_header_size + max_command_prefix + copy_threshold_);
    if (capacity != staging_capacity_) {
        staging_ = std::make_unique<std::uint8_t[]>(capacity);
        staging_capacity_ = capacity;
    }
    return true;
}

// Appends octets to the staging area, extending the last gather entry when it
// already ends at the staging tail (the common case: one entry for a whole batch).
void frame_encoder::append_staged(const std::uint8_t *p, std::size_t n) noexcept {
    if (n == 0)
        return;
    std::uint8_t *dst = staging_.get() + staging_used_;
    std::memcpy(dst, p, n);
    staging_used_ += n;
    pending_ += n;
    if (count_ > 0 && bufs_[count_ - 1].data + bufs_[count_ - 1].size == dst) {
        bufs_[count_ - 1].size += n;
        return;
    }
    bufs_[count_++] = const_buffer{dst, n};
}

void frame_encoder::append_reference(const std::uint8_t *p, std::size_t n) noexcept {
    bufs_[count_++] = const_buffer{p, n};
    pending_ += n;
}

bool frame_encoder::add_frame(std::uint8_t more_flag, bool command,
                              std::span<const std::uint8_t> prefix,
                              std::span<const std::uint8_t> body) noexcept {
    const std::uint64_t size = prefix.size() + body.size();
    const bool copy_body = body.size() <= copy_threshold_;
    const std::size_t staged =
        header_size_for(size) + prefix.size() + (copy_body ? body.size() : 0);
    // A staged run may need a fresh entry (after a reference), plus one for the body.
    const std::size_t entries = copy_body ? 1 : 2;
    if (staging_used_ + staged > staging_capacity_ || count_ + entries > max_buffers_)
        return false;
    std::array<std::uint8_t, max_header_size> hdr;
    const std::size_t hlen = write_frame_header(hdr.data(), size, more_flag != 0, command);
    append_staged(hdr.data(), hlen);
    append_staged(prefix.data(), prefix.size());
    if (copy_body)
        append_staged(body.data(), body.size());
    else
        append_reference(body.data(), body.size());
    return true;
}

bool frame_encoder::add(std::span<const std::uint8_t> body, bool more) noexcept {
    return add_frame(more ? 1 : 0, false, {}, body);
}

bool frame_encoder::add_command(std::string_view name,
                                std::span<const std::uint8_t> data) noexcept {
    if (name.empty() || name.size() > 255)
        return false;
    std::array<std::uint8_t, max_command_prefix> prefix;
    prefix[0] = static_cast<std::uint8_t>(name.size());
    std::memcpy(prefix.data() + 1, name.data(), name.size());
    return add_frame(0, true, std::span(prefix.data(), name.size() + 1), data);
}

bool frame_encoder::add_subscription(bool subscribe, std::span<const std::uint8_t> topic,
                                     zmtp_version peer) noexcept {
    if (peer.has_subscribe_commands())
        return add_command(subscribe ? "SUBSCRIBE" : "CANCEL", topic);
    const std::uint8_t marker = subscribe ? 1 : 0;
    return add_frame(0, false, std::span(&marker, 1), topic);
}

bool frame_encoder::add_ping(std::uint16_t ttl_deciseconds,
                             std::span<const std::uint8_t> context) noexcept {
    if (context.size() > max_ping_context)
        return false;
    std::array<std::uint8_t, 2 + max_ping_context> data;
    data[0] = static_cast<std::uint8_t>(ttl_deciseconds >> 8);
    data[1] = static_cast<std::uint8_t>(ttl_deciseconds & 0xFF);
    if (!context.empty())
        std::memcpy(data.data() + 2, context.data(), context.size());
    return add_command("PING", std::span(data.data(), 2 + context.size()));
}

bool frame_encoder::add_pong(std::span<const std::uint8_t> context) noexcept {
    if (context.size() > max_ping_context)
        return false;
    return add_command("PONG", context);
}

bool frame_encoder::add_raw(std::span<const std::uint8_t> bytes) noexcept {
    if (bytes.size() > staging_capacity_ - staging_used_ || count_ + 1 > max_buffers_)
        return false;
    append_staged(bytes.data(), bytes.size());
    return true;
}

std::span<const const_buffer> frame_encoder::buffers() const noexcept {
    return {bufs_.get() + first_, count_ - first_};
}

void frame_encoder::consume(std::size_t n) noexcept {
    n = std::min(n, pending_);
    pending_ -= n;
    while (n > 0 && first_ < count_) {
        const_buffer &b = bufs_[first_];
        const std::size_t k = std::min(n, b.size);
        b.data += k;
        b.size -= k;
        n -= k;
        if (b.size == 0)
            ++first_;
    }
    if (pending_ == 0) {
        first_ = count_ = 0;
        staging_used_ = 0;
    }
}

}  // namespace zlink::wire
