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
    bad_signature,        // peer's first 10 octets are not %xFF 8OCTET %x7F
                          // (a ZMTP 1.0 peer, or not ZMTP at all)
    unsupported_version,  // peer announced ZMTP 1.x/2.x (major < 3)
    mechanism_mismatch,   // peer's mechanism differs from ours (e.g. CURVE, PLAIN)
    malformed_mechanism,  // mechanism field holds characters the RFC forbids
    // Framing
    reserved_flags_set,   // a flags octet has one of bits 7-3 set
    command_with_more,    // a command frame has the MORE bit set
    frame_too_large,      // frame body exceeds the configured maximum size
    frame_size_overflow,  // long size >= 2^63, or larger than this host can address
    // Commands
    malformed_command,        // command name empty, not ALPHA, or longer than the body
    malformed_metadata,       // READY properties do not parse (bad name, value past end)
    malformed_error_command,  // ERROR body is not a short-size reason
    malformed_ping,           // PING without TTL, or context > 16 octets (PING/PONG)
    // NULL handshake
    missing_socket_type,       // peer's READY has no Socket-Type property
    unknown_socket_type,       // peer's Socket-Type is not a type zlink knows
    incompatible_socket_type,  // peer's Socket-Type may not talk to ours (RFC 37 table)
    peer_sent_error,           // peer sent an ERROR command (reason kept by the handshake)
    unexpected_command,        // a command other than READY/ERROR during the handshake
    unexpected_message,        // a message frame before the handshake completed
    handshake_too_large,       // a handshake command exceeds the handshake size limit
    // PLAIN and CURVE handshakes (RFC 24, RFC 26), CURVE MESSAGE
    malformed_hello,     // HELLO of the wrong size, version or layout
    malformed_welcome,   // WELCOME of the wrong size
    malformed_initiate,  // INITIATE shorter than its fixed part
    malformed_ready,     // CURVE READY shorter than nonce plus box
    malformed_message,   // MESSAGE shorter than nonce plus box plus flags
    cryptographic,       // a box did not open (wrong key, tampered or replayed cookie)
    key_exchange,        // the vouch names another short-term key than the HELLO's
    invalid_sequence,    // a nonce not above the last one (replay or reorder)
    nonce_exhausted,     // 2^64-1 nonces used on one connection
    // ZAP (RFC 27)
    no_zap_handler,           // nothing bound at inproc://zeromq.zap.01 and one is required
    auth_failed,              // ZAP (or, seen by a client, the server's ERROR) said 300/400/500
    zap_malformed_reply,      // reply is not 7 frames with MORE on all but the last
    zap_unspecified,          // reply's delimiter frame is not empty
    zap_bad_version,          // reply version is not "1.0"
    zap_bad_request_id,       // reply request id is not the one we sent
    zap_invalid_status_code,  // status code other than 200, 300, 400, 500
    zap_invalid_metadata,     // reply metadata does not parse
    // Encoding
    buffer_too_small,  // caller's output span cannot hold the encoding
};

// One-line, human-readable description ("peer sent ZMTP 2.x; only 3.0 and 3.1 are
// accepted"), suitable for logs and monitor events. Never returns nullptr.
const char *to_string(wire_error e) noexcept;

}  // namespace zlink::wire
