// ZMTP 3.x greeting: the fixed 64-octet preamble each peer sends first.
//
//   octets 0-9   signature  %xFF, 8 padding octets (never interpreted), %x7F
//   octet  10    version-major (3)
//   octet  11    version-minor (1 from us; 0 accepted from a ZMTP 3.0 peer)
//   octets 12-31 mechanism, ASCII, null padded ("NULL")
//   octet  32    as-server (zero for NULL)
//   octets 33-63 filler, zero
//
// We send it in three steps, as libzmq 4.3.5 does (the RFC's "detect and downgrade"
// order, without the downgrade): the signature at once, version-major once the peer's
// signature arrived, the other 53 octets once the peer's version-major arrived
// (greeting_release()). A peer, or a raw STREAM socket reading us, sees exactly
// libzmq's bytes in libzmq's order. zlink never downgrades: the peer's greeting is
// parsed incrementally, octet 0 and octet 9 reject non-ZMTP and ZMTP 1.0 peers,
// octet 10 rejects ZMTP 2.x (before we send more than 11 octets), octets 12-31
// reject a mechanism other than ours.
//
// The padding carries the length of a ZMTP 1.0 identity frame (routing id size + 1,
// 64-bit network order), as libzmq writes it; RFC 37 forbids interpreting it, so only
// 1.0-era peers (and byte-exact tests) care.
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
    constexpr bool has_subscribe_commands() const noexcept {
        return major > 3 || (major == 3 && minor >= 1);
    }
};

// Builds our greeting: ZMTP 3.`minor` (always 3.1 in zlink; tests pass 0 to emulate a
// ZMTP 3.0 peer), `mechanism` (1-20 chars from "A-Z0-9-_.+"; the caller passes a
// constant such as "NULL"), as-server flag, padding routing_id_size + 1, zero filler.
std::array<std::uint8_t, greeting_size> make_greeting(std::string_view mechanism = "NULL",
                                                      bool as_server = false,
                                                      std::uint8_t minor = our_minor,
                                                      std::size_t routing_id_size = 0) noexcept;

// How many octets of our greeting may be on the wire once `peer_octets` octets of the
// peer's greeting were accepted: the signature first; version-major after the peer's
// signature (a ZMTP 1.0 peer is recognised by it); the rest after the peer's
// version-major (a 2.x peer is refused before it sees our mechanism).
constexpr std::size_t greeting_release(std::size_t peer_octets) noexcept {
    if (peer_octets < signature_size)
        return signature_size;
    if (peer_octets == signature_size)
        return signature_size + 1;
    return greeting_size;
}

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
    // Octets of the peer's greeting accepted so far (the offending octet not counted).
    std::size_t accepted() const noexcept { return failed() ? received_ - 1 : received_; }

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

}  // namespace zlink::wire
