// Error kinds of the ZMTP codec.
//
// The codec never throws: every operation that can fail reports one of these values
// (the hot path stays exception-free and the engine decides what to do, which for
// every kind except `none` is "close this connection, keep the socket").
#pragma once

#include <cstdint>

namespace zlink::wire {

enum class wire_error : std::uint8_t {
    none = 0,
    // Greeting
    bad_signature,          // peer's first 10 octets are not %xFF 8OCTET %x7F
                            // (a ZMTP 1.0 peer, or not ZMTP at all)
    unsupported_version,    // peer announced ZMTP 1.x/2.x (major < 3)
    mechanism_mismatch,     // peer's mechanism differs from ours (e.g. CURVE, PLAIN)
    malformed_mechanism,    // mechanism field holds characters the RFC forbids
    // Framing
    reserved_flags_set,     // a flags octet has one of bits 7-3 set
    command_with_more,      // a command frame has the MORE bit set
    frame_too_large,        // frame body exceeds the configured maximum size
    frame_size_overflow,    // long size >= 2^63, or larger than this host can address
    // Commands
    malformed_command,      // command name empty, not ALPHA, or longer than the body
    malformed_metadata,     // READY properties do not parse (bad name, value past end)
    malformed_error_command,// ERROR body is not a short-size reason
    malformed_ping,         // PING without TTL, or context > 16 octets (PING/PONG)
    // NULL handshake
    missing_socket_type,    // peer's READY has no Socket-Type property
    unknown_socket_type,    // peer's Socket-Type is not a type zlink knows
    incompatible_socket_type,// peer's Socket-Type may not talk to ours (RFC 37 table)
    peer_sent_error,        // peer sent an ERROR command (reason kept by the handshake)
    unexpected_command,     // a command other than READY/ERROR during the handshake
    unexpected_message,     // a message frame before the handshake completed
    handshake_too_large,    // a handshake command exceeds the handshake size limit
    // Encoding
    buffer_too_small,       // caller's output span cannot hold the encoding
};

// One-line, human-readable description ("peer sent ZMTP 2.x; only 3.0 and 3.1 are
// accepted"), suitable for logs and monitor events. Never returns nullptr.
const char* to_string(wire_error e) noexcept;

} // namespace zlink::wire
