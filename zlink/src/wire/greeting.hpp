// ZMTP 3.x greeting: the fixed 64-octet preamble each peer sends first.
//
//   octets 0-9   signature  %xFF, 8 padding octets (never interpreted), %x7F
//   octet  10    version-major (3)
//   octet  11    version-minor (1 from us; 0 accepted from a ZMTP 3.0 peer)
//   octets 12-31 mechanism, ASCII, null padded ("NULL")
//   octet  32    as-server (zero for NULL)
//   octets 33-63 filler, zero
//
// We send the whole greeting at once (the RFC's "demand ZMTP capabilities" strategy):
// zlink does not downgrade, so there is nothing to wait for. The peer's greeting is
// parsed incrementally: octet 0 and octet 9 reject non-ZMTP and ZMTP 1.0 peers,
// octet 10 rejects ZMTP 2.x, octets 12-31 reject a mechanism other than ours.
#pragma once

#include "wire/error.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace zlink::wire {

inline constexpr std::size_t greeting_size = 64;
inline constexpr std::size_t signature_size = 10;
inline constexpr std::size_t mechanism_size = 20;
inline constexpr std::uint8_t our_major = 3;
inline constexpr std::uint8_t our_minor = 1;

struct zmtp_version {
    std::uint8_t major = 0;
    std::uint8_t minor = 0;
    // ZMTP 3.1 added the SUBSCRIBE/CANCEL/PING/PONG commands; a 3.0 peer gets
    // subscriptions in the message form (first body octet 1 = subscribe, 0 = cancel).
    constexpr bool has_subscribe_commands() const noexcept
    {
        return major > 3 || (major == 3 && minor >= 1);
    }
};

// Builds our greeting: ZMTP 3.`minor` (always 3.1 in zlink; tests pass 0 to emulate a
// ZMTP 3.0 peer), `mechanism` (1-20 chars from "A-Z0-9-_.+"; the caller passes a
// constant such as "NULL"), as-server flag, zero padding and filler.
std::array<std::uint8_t, greeting_size> make_greeting(std::string_view mechanism = "NULL",
                                                      bool as_server = false,
                                                      std::uint8_t minor = our_minor) noexcept;

// Incremental parser of the peer's greeting. Feed whatever bytes arrived, in any
// split; it consumes only what belongs to the greeting.
class greeting_parser {
public:
    // `expected_mechanism`: the mechanism we announced; the peer's must match exactly
    // (RFC 37: "If the mechanism that the peer received does not exactly match the
    // mechanism it sent, it MUST close the connection."). Must outlive the parser
    // (pass a literal).
    explicit greeting_parser(std::string_view expected_mechanism = "NULL") noexcept;

    // Consumes up to bytes_needed() octets from `in` and returns how many it took.
    // Stops early, at the offending octet, on error; after done() or failed() it
    // consumes nothing. Errors: bad_signature, unsupported_version,
    // malformed_mechanism, mechanism_mismatch.
    std::size_t feed(std::span<const std::uint8_t> in) noexcept;

    bool done() const noexcept { return received_ == greeting_size && error_ == wire_error::none; }
    bool failed() const noexcept { return error_ != wire_error::none; }
    wire_error error() const noexcept { return error_; }
    std::size_t bytes_needed() const noexcept { return failed() ? 0 : greeting_size - received_; }

    // Valid once 12 octets were accepted (always valid after done()).
    zmtp_version peer_version() const noexcept { return {bytes_[10], bytes_[11]}; }
    // The peer's mechanism without its null padding; valid after done() or after a
    // mechanism_mismatch error (for the log line).
    std::string_view peer_mechanism() const noexcept;
    bool peer_as_server() const noexcept { return bytes_[32] != 0; }

private:
    wire_error check_octet(std::size_t pos) const noexcept;

    std::string_view expected_;
    std::array<std::uint8_t, greeting_size> bytes_{};
    std::size_t received_ = 0;
    wire_error error_ = wire_error::none;
};

} // namespace zlink::wire
