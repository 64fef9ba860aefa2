// ZMTP 3.x connection start with the NULL security mechanism (RFC 37), as a
// byte-driven state machine with no I/O of its own.
//
//   1. outgoing() holds our 64-octet greeting from construction on, released in
//      steps as the peer's greeting arrives (greeting_release(): signature, major, rest).
//   2. feed() parses the peer's greeting; once accepted, our READY (Socket-Type,
//      Identity for REQ/DEALER/ROUTER, extra properties) is appended to outgoing().
//      With a ZAP domain (RFC 27) the ZAP handler is asked first (mechanism
//      "NULL", no credentials) and READY follows its 200; 400/500 send an ERROR
//      with the status code instead, 300 closes without one, as libzmq does.
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
// Errors: every greeting error, the frame_decoder errors, malformed_command,
// malformed_metadata, malformed_error_command, unexpected_command (not
// READY/ERROR), unexpected_message (a message frame), handshake_too_large,
// missing_socket_type, unknown_socket_type, incompatible_socket_type,
// peer_sent_error, auth_failed (ZAP refused, or the peer's ERROR carried a ZAP
// status code), no_zap_handler (ZAP domain, no handler, ZMQ_ZAP_ENFORCE_DOMAIN).
// error_detail(): the peer's ERROR reason, the peer's mechanism
// (mechanism_mismatch), the peer's Socket-Type value, or the ZAP status code.
#pragma once

#include "wire/mechanism_base.hpp"

namespace zlink::wire {

class null_handshake final : public mechanism_base {
public:
    explicit null_handshake(const handshake_options &opts, const zap_policy &zap = {});

    const char *mechanism() const noexcept override { return "NULL"; }

private:
    void on_greeting() override;
    void on_command(const command_view &cmd) override;
    void on_zap_accepted() override { send_ready(); }
    void on_zap_missing() override;
    void send_ready();

    zap_policy zap_;
};

}  // namespace zlink::wire
