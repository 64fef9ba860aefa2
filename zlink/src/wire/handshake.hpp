// The connection start as the engine sees it, whatever the security mechanism.
//
// This is the seam between the transport engine (src/transport) and the
// mechanisms of the wire layer (NULL today; PLAIN and CURVE, RFC 24/26, next).
// A handshake is a byte-driven state machine with no I/O of its own: the
// engine writes outgoing(), feeds what it reads, and stops feeding once done()
// or failed(). Everything a mechanism needs beyond bytes arrives through this
// interface too:
//   - ZAP (RFC 27): a server-side mechanism that must ask the ZAP handler
//     publishes a request in zap_pending(); the engine's session sends it to
//     inproc://zeromq.zap.01 and hands the reply to zap_answer(). The handshake
//     makes no progress while a request is pending.
//   - Frame transforms: after done(), a mechanism that protects traffic (CURVE's
//     MESSAGE command) returns a frame_transform from transform(); the engine then
//     passes every outgoing frame (messages and commands) through seal() and the
//     body of every incoming frame through open(). NULL and PLAIN return nullptr:
//     frames go as they are (and large bodies keep their zero-copy path).
// The engine never asks which mechanism it holds except for logs and monitor
// events (mechanism()).
#pragma once

#include "wire/command.hpp"
#include "wire/error.hpp"
#include "wire/greeting.hpp"
#include "wire/socket_type.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zlink::wire {

// What every mechanism needs to know about our side of the connection.
struct handshake_options {
    socket_type self = socket_type::pair;           // must speak ZMTP (not STREAM)
    std::span<const std::uint8_t> routing_id = {};  // ZMQ_ROUTING_ID (copied)
    std::span<const property_view> extra = {};      // e.g. "X-..." metadata (copied)
    // Largest handshake command accepted from the peer; above it: handshake_too_large.
    std::size_t max_handshake_command = 64 * 1024;
    // Minor version we announce. zlink always speaks 3.1; interop tests set 0 to
    // play a ZMTP 3.0 peer (then send subscriptions in the message form).
    std::uint8_t announce_minor = our_minor;
};

// What a server-side mechanism needs to know about ZAP (RFC 27).
struct zap_policy {
    bool domain_set = false;      // ZMQ_ZAP_DOMAIN is not empty
    bool enforce_domain = false;  // ZMQ_ZAP_ENFORCE_DOMAIN
};

// What the mechanism asks the ZAP handler (RFC 27 request frames it fills in;
// the session adds version, request id, domain, address and identity).
struct zap_request {
    std::string mechanism;                               // "NULL", "PLAIN", "CURVE"
    std::vector<std::vector<std::uint8_t>> credentials;  // PLAIN: user, password; CURVE: client key
};

// What the ZAP handler answered. When nothing is bound at inproc://zeromq.zap.01
// the session answers with handler_missing set and nothing else; the mechanism
// decides what that means (PLAIN fails; NULL and CURVE go on unless
// ZMQ_ZAP_ENFORCE_DOMAIN is set), as libzmq 4.3.5 does.
struct zap_reply {
    bool handler_missing = false;
    std::string status_code;  // "200" accepts; "300", "400", "500" refuse
    std::string status_text;
    std::string user_id;
    std::vector<std::uint8_t> metadata;  // ZMTP property encoding, may be empty
};

// Protects frames after the handshake. Implementations own their keys and
// nonces; both calls are on the engine's thread, in wire order.
//
// `flags` are frame_flag bits: frame_flag::more and frame_flag::command. Every
// frame the engine would have sent in clear goes through seal(), commands too
// (PING, PONG, SUBSCRIBE, CANCEL travel inside CURVE MESSAGE commands, as
// libzmq sends them); the transform carries both bits to the peer.
class frame_transform {
public:
    virtual ~frame_transform() = default;
    // Appends the complete wire encoding (frame header and body) of one
    // protected frame carrying `body` with `flags` to `out`.
    virtual wire_error seal(std::uint8_t flags, std::span<const std::uint8_t> body,
                            std::vector<std::uint8_t> &out) = 0;
    // Opens the body of one received frame (for CURVE a MESSAGE command, name
    // included; anything else is refused). On success `body` holds the
    // plaintext and `flags` its frame_flag::more / frame_flag::command bits: a
    // command is then handled exactly as a command frame received in clear.
    virtual wire_error open(std::span<const std::uint8_t> frame_body, std::uint8_t &flags,
                            std::vector<std::uint8_t> &body) = 0;
    // As open(), but the plaintext is left inside `frame_body` (overwritten) and
    // `body` is set to the part of it that holds it. The engine receives a large
    // frame straight into a message block, so opening it there lets the message
    // be a window into that block: no second block, no copy of the body. The
    // default opens a copy and writes the plaintext back (the plaintext is never
    // longer than the frame body).
    virtual wire_error open_in_place(std::span<std::uint8_t> frame_body, std::uint8_t &flags,
                                     std::span<std::uint8_t> &body);
};

inline wire_error frame_transform::open_in_place(std::span<std::uint8_t> frame_body,
                                                 std::uint8_t &flags,
                                                 std::span<std::uint8_t> &body) {
    std::vector<std::uint8_t> plain;
    const wire_error e = open(frame_body, flags, plain);
    if (e != wire_error::none)
        return e;
    if (plain.size() > frame_body.size())
        return wire_error::malformed_message;  // a transform that breaks the contract
    std::copy(plain.begin(), plain.end(), frame_body.begin());
    body = frame_body.first(plain.size());
    return e;
}

class handshake {
public:
    virtual ~handshake() = default;

    // Octets to send now, and how many of them were written.
    virtual std::span<const std::uint8_t> outgoing() const noexcept = 0;
    virtual void consume_outgoing(std::size_t n) noexcept = 0;

    // Consumes peer octets; returns how many. Never consumes past the end of the
    // handshake; consumes nothing once done() or failed(), or while a ZAP
    // request is pending. Bytes left over after done() belong to the frame decoder.
    virtual std::size_t feed(std::span<const std::uint8_t> in) = 0;

    virtual bool done() const noexcept = 0;
    virtual bool failed() const noexcept = 0;
    virtual wire_error error() const noexcept = 0;
    // Free-form detail for the error (peer's ERROR reason, peer's mechanism, ...).
    virtual std::string_view error_detail() const noexcept = 0;

    // Valid once the peer's greeting was accepted.
    virtual zmtp_version peer_version() const noexcept = 0;
    virtual zmtp_version session_version() const noexcept = 0;
    // Valid after done().
    virtual socket_type peer_socket_type() const noexcept = 0;
    virtual bool peer_has_routing_id() const noexcept = 0;
    virtual std::span<const std::uint8_t> peer_routing_id() const noexcept = 0;
    // The peer's READY (or INITIATE) properties, ZMTP property encoding.
    virtual std::span<const std::uint8_t> peer_metadata() const noexcept = 0;

    // "NULL", "PLAIN" or "CURVE".
    virtual const char *mechanism() const noexcept = 0;

    // ZAP: non-null while the handshake waits for the handler's answer.
    virtual const zap_request *zap_pending() const noexcept { return nullptr; }
    virtual void zap_answer(const zap_reply &) {}
    // ZAP's User-Id once accepted (empty without ZAP).
    virtual std::string_view user_id() const noexcept { return {}; }

    // After done(): non-null when message frames must pass through it.
    virtual frame_transform *transform() noexcept { return nullptr; }
};

}  // namespace zlink::wire
