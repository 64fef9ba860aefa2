// ZMTP 3.x command bodies: parse and build READY, ERROR, SUBSCRIBE, CANCEL, PING,
// PONG, plus the ZMTP 3.0 subscription-message form.
//
// A command body is   name-size(1) name(1..255 ALPHA) data(*)
// READY data is       *(name-size(1) name(1..255) value-size(4, network order) value)
// ERROR data is       reason-size(1) reason(0..255)
// PING data is        ttl(2, network order, tenths of a second) context(0..16)
// PONG data is        context(0..16)
// SUBSCRIBE/CANCEL    data is the topic (any octets)
//
// Parsers return views into the caller's buffer (no copies, no allocation).
#pragma once

#include "wire/error.hpp"
#include "wire/frame.hpp"
#include "wire/socket_type.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace zlink::wire {

enum class command_kind : std::uint8_t { ready, error, subscribe, cancel, ping, pong, other };

struct command_view {
    command_kind kind = command_kind::other;
    std::string_view name;               // as sent, e.g. "READY"
    std::span<const std::uint8_t> data;  // everything after the name
};

// Splits a command frame body. Errors: malformed_command (empty body, zero-length or
// non-ALPHA name, name longer than the body). Unknown names parse as `other`
// (RFC 37: mechanisms "MAY use any command names"; the caller ignores or refuses).
wire_error parse_command(std::span<const std::uint8_t> body, command_view &out) noexcept;

// ---- READY metadata -------------------------------------------------------------

struct property_view {
    std::string_view name;
    std::span<const std::uint8_t> value;
};

// Walks the properties of READY data in order.
class metadata_reader {
public:
    explicit metadata_reader(std::span<const std::uint8_t> data) noexcept : rest_(data) {}
    // Returns true and fills `p` for the next property; false at the end or on a
    // malformed property (then error() == malformed_metadata).
    bool next(property_view &p) noexcept;
    wire_error error() const noexcept { return error_; }

private:
    std::span<const std::uint8_t> rest_;
    wire_error error_ = wire_error::none;
};

// Checks a whole property list (names 1..255 from ALPHA/DIGIT/"-_.+", values 0..2^31-1
// octets within the data). Returns none or malformed_metadata.
wire_error validate_metadata(std::span<const std::uint8_t> data) noexcept;

// Finds a property by name, case-insensitively (RFC 37: "Metadata names SHALL be
// case-insensitive"). Assumes validated data. First match wins.
bool find_property(std::span<const std::uint8_t> data, std::string_view name,
                   std::span<const std::uint8_t> &value) noexcept;

// Octets a property occupies in READY data.
constexpr std::size_t property_size(std::string_view name, std::size_t value_size) noexcept {
    return 1 + name.size() + 4 + value_size;
}

// Size of the complete READY frame (header + body) for `self` with the given
// routing id (sent as Identity only when sends_identity(self)) and extra
// properties (e.g. application "X-" metadata).
std::size_t ready_frame_size(socket_type self, std::span<const std::uint8_t> routing_id,
                             std::span<const property_view> extra = {}) noexcept;

// Writes that READY frame into `out`: Socket-Type first, then Identity, then `extra`
// in order. Returns the octets written, or 0 when `out` is smaller than
// ready_frame_size() or a name is not 1..255 octets.
std::size_t write_ready_frame(std::span<std::uint8_t> out, socket_type self,
                              std::span<const std::uint8_t> routing_id,
                              std::span<const property_view> extra = {}) noexcept;

// ---- ERROR ----------------------------------------------------------------------

// Complete ERROR frame; `reason` is cut to 255 octets. Returns octets written or 0
// when `out` is too small (max_error_frame_size always suffices).
inline constexpr std::size_t max_error_frame_size = long_header_size + 1 + 5 + 1 + 255;
std::size_t write_error_frame(std::span<std::uint8_t> out, std::string_view reason) noexcept;
// Errors: malformed_error_command.
wire_error parse_error_data(std::span<const std::uint8_t> data, std::string_view &reason) noexcept;

// ---- PING / PONG ----------------------------------------------------------------

inline constexpr std::size_t max_ping_context = 16;
// Errors: malformed_ping (fewer than 2 octets, or context over 16 octets).
wire_error parse_ping_data(std::span<const std::uint8_t> data, std::uint16_t &ttl_deciseconds,
                           std::span<const std::uint8_t> &context) noexcept;
// Errors: malformed_ping (context over 16 octets).
wire_error parse_pong_data(std::span<const std::uint8_t> data,
                           std::span<const std::uint8_t> &context) noexcept;

// ---- ZMTP 3.0 subscription-message form -------------------------------------------

enum class subscription_action : std::uint8_t { none, subscribe, cancel };

// For a single-frame message received by a PUB/XPUB from a ZMTP 3.0 peer (or from
// libzmq, which also accepts this form): first octet 1 = subscribe, 0 = cancel, rest
// is the topic. Anything else (empty body, other first octet) is `none`.
subscription_action classify_subscription_message(std::span<const std::uint8_t> body,
                                                  std::span<const std::uint8_t> &topic) noexcept;

}  // namespace zlink::wire
