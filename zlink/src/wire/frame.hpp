// ZMTP 3.x frame header: a flags octet followed by a 1-octet (short) or 8-octet
// network-order (long) body size.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zlink::wire {

namespace frame_flag {
inline constexpr std::uint8_t more = 0x01;       // bit 0: more frames follow
inline constexpr std::uint8_t long_size = 0x02;  // bit 1: 8-octet size field
inline constexpr std::uint8_t command = 0x04;    // bit 2: command frame
inline constexpr std::uint8_t reserved = 0xF8;   // bits 7-3: MUST be zero
}  // namespace frame_flag

inline constexpr std::size_t short_header_size = 2;
inline constexpr std::size_t long_header_size = 9;
inline constexpr std::size_t max_header_size = long_header_size;
inline constexpr std::uint64_t max_short_body = 255;
// RFC 37: "A long frame has a body of 0 to 2^63-1 octets."
inline constexpr std::uint64_t max_long_body = (std::uint64_t{1} << 63) - 1;

struct frame_header {
    std::uint8_t flags = 0;
    std::uint64_t size = 0;

    constexpr bool more() const noexcept { return (flags & frame_flag::more) != 0; }
    constexpr bool command() const noexcept { return (flags & frame_flag::command) != 0; }
    constexpr bool long_size() const noexcept { return (flags & frame_flag::long_size) != 0; }
};

// Header length the encoder uses for a body of `size` octets: short up to 255
// octets, long above (RFC 37 "SHOULD" for commands, what libzmq does for all frames).
constexpr std::size_t header_size_for(std::uint64_t size) noexcept {
    return size <= max_short_body ? short_header_size : long_header_size;
}

// Writes the header of a frame with `size` body octets into out[0..header_size_for(size)),
// `out` must have room for max_header_size octets. `more` must be false when
// `command` is true (commands are single frames). Returns the header length.
std::size_t write_frame_header(std::uint8_t *out, std::uint64_t size, bool more,
                               bool command) noexcept;

}  // namespace zlink::wire
