// ZMTP 3.x connection start with the NULL security mechanism, as a byte-driven state
// machine with no I/O of its own.
//
//   1. outgoing() holds our 64-octet greeting from construction on.
//   2. feed() parses the peer's greeting; once accepted, our READY (Socket-Type,
//      Identity for REQ/DEALER/ROUTER, extra properties) is appended to outgoing().
//   3. feed() reads the peer's READY (or ERROR), validates its Socket-Type against
//      the RFC 37 table; on a mismatch an ERROR command is appended to outgoing()
//      and the handshake fails.
//   4. done(): both READYs exchanged (ours queued). Flush outgoing() before any
//      traffic frame; bytes after the peer's READY were left unconsumed by feed()
//      and belong to a frame_decoder.
//
// On failed(): still flush outgoing() if non-empty (it may carry the ERROR command),
// then close the connection and report to_string(error()).
//
// Memory: one output buffer and the peer's READY body, both bounded
// (max_handshake_command); allocated per connection, never per frame.
#pragma once

#include "wire/command.hpp"
#include "wire/error.hpp"
#include "wire/frame_decoder.hpp"
#include "wire/greeting.hpp"
#include "wire/handshake.hpp"
#include "wire/socket_type.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zlink::wire {

struct handshake_options {
    socket_type self = socket_type::pair;          // must speak ZMTP (not STREAM)
    std::span<const std::uint8_t> routing_id = {}; // ZMQ_ROUTING_ID (copied)
    std::span<const property_view> extra = {};     // e.g. "X-..." metadata (copied)
    // Largest READY/ERROR body accepted from the peer; above it: handshake_too_large.
    std::size_t max_handshake_command = 64 * 1024;
    // Minor version we announce. zlink always speaks 3.1; interop tests set 0 to
    // play a ZMTP 3.0 peer (then send subscriptions in the message form).
    std::uint8_t announce_minor = our_minor;
};

class null_handshake final : public handshake {
public:
    explicit null_handshake(const handshake_options& opts);

    const char* mechanism() const noexcept override { return "NULL"; }

    // Octets to send now, and how many of them were written.
    std::span<const std::uint8_t> outgoing() const noexcept override;
    void consume_outgoing(std::size_t n) noexcept override;

    // Consumes peer octets; returns how many. Never consumes past the end of the
    // peer's READY; consumes nothing once done() or failed(). Errors: every greeting
    // error, the frame_decoder errors, malformed_command, malformed_metadata,
    // malformed_error_command, unexpected_command (not READY/ERROR),
    // unexpected_message (a message frame), handshake_too_large,
    // missing_socket_type, unknown_socket_type, incompatible_socket_type,
    // peer_sent_error.
    std::size_t feed(std::span<const std::uint8_t> in) override;

    bool done() const noexcept override { return done_; }
    bool failed() const noexcept override { return error_ != wire_error::none; }
    wire_error error() const noexcept override { return error_; }
    // The ERROR reason the peer sent (peer_sent_error), or the peer's mechanism
    // (mechanism_mismatch), or the peer's Socket-Type value (unknown/incompatible).
    std::string_view error_detail() const noexcept override { return detail_; }

    // Valid once the greeting was accepted.
    zmtp_version peer_version() const noexcept override { return greeting_.peer_version(); }
    // The version both sides speak: the lower of ours and the peer's ("A peer MAY
    // downgrade its protocol to talk to a lower protocol peer"). Pass this to
    // frame_encoder::add_subscription.
    zmtp_version session_version() const noexcept override;
    // Valid after done().
    socket_type peer_socket_type() const noexcept override { return peer_type_; }
    bool peer_has_routing_id() const noexcept override { return peer_has_id_; }
    std::span<const std::uint8_t> peer_routing_id() const noexcept override;
    // The peer's raw READY properties (walk with metadata_reader / find_property),
    // for zmq_msg_gets and ZMQ_METADATA-style lookups.
    std::span<const std::uint8_t> peer_metadata() const noexcept override;

private:
    std::size_t feed_frames(std::span<const std::uint8_t> in);
    void on_greeting_accepted();
    void on_command();
    void fail(wire_error e, std::string_view detail = {});
    void queue_error_command(std::string_view reason);

    handshake_options opts_;
    std::vector<std::uint8_t> routing_id_;
    std::vector<std::uint8_t> extra_bytes_;       // copies of extra names/values
    std::vector<property_view> extra_;
    std::vector<std::uint8_t> out_;
    std::size_t out_sent_ = 0;
    greeting_parser greeting_;
    frame_decoder decoder_;
    std::vector<std::uint8_t> command_;           // peer's READY/ERROR body
    std::size_t meta_offset_ = 0;                 // READY data within command_
    std::size_t id_offset_ = 0, id_size_ = 0;     // Identity value within command_
    socket_type peer_type_ = socket_type::pair;
    bool peer_has_id_ = false;
    bool done_ = false;
    wire_error error_ = wire_error::none;
    std::string detail_;
};

} // namespace zlink::wire
