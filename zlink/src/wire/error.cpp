#include "wire/error.hpp"

namespace zlink::wire {

const char *to_string(wire_error e) noexcept {
    switch (e) {
    case wire_error::none: return "no error";
    case wire_error::bad_signature:
        return "peer greeting lacks the ZMTP 3 signature (%xFF..%x7F): ZMTP 1.0 or not ZMTP";
    case wire_error::unsupported_version:
        return "peer speaks ZMTP 1.x/2.x; only ZMTP 3.0 and later are accepted";
    case wire_error::mechanism_mismatch:
        return "peer security mechanism differs from ours (NULL, PLAIN and CURVE must match)";
    case wire_error::malformed_mechanism:
        return "peer greeting mechanism has characters outside A-Z 0-9 - _ . +";
    case wire_error::reserved_flags_set:
        return "frame flags have reserved bits 7-3 set; they must be zero";
    case wire_error::command_with_more:
        return "command frame has the MORE flag set; commands are single frames";
    case wire_error::frame_too_large:
        return "frame body exceeds the maximum message size (ZMQ_MAXMSGSIZE)";
    case wire_error::frame_size_overflow:
        return "frame size is 2^63 or more, or larger than this host can address";
    case wire_error::malformed_command:
        return "command frame has an empty, non-alphabetic or overlong name";
    case wire_error::malformed_metadata:
        return "READY metadata is malformed (bad property name or value past the end)";
    case wire_error::malformed_error_command:
        return "ERROR command body is not a 1-octet length plus reason";
    case wire_error::malformed_ping:
        return "PING/PONG malformed: TTL missing or context over 16 octets";
    case wire_error::missing_socket_type: return "peer READY has no Socket-Type property";
    case wire_error::unknown_socket_type: return "peer Socket-Type is not one zlink supports";
    case wire_error::incompatible_socket_type:
        return "peer Socket-Type may not connect to this socket type (ZMTP RFC 37 table)";
    case wire_error::peer_sent_error: return "peer refused the handshake with an ERROR command";
    case wire_error::unexpected_command:
        return "unexpected command during the handshake; only READY or ERROR allowed";
    case wire_error::unexpected_message:
        return "message frame received before the handshake completed";
    case wire_error::handshake_too_large:
        return "handshake command larger than the handshake limit";
    case wire_error::malformed_hello: return "HELLO command has the wrong size, version or layout";
    case wire_error::malformed_welcome: return "WELCOME command has the wrong size";
    case wire_error::malformed_initiate: return "INITIATE command is shorter than its fixed part";
    case wire_error::malformed_ready:
        return "CURVE READY command is shorter than its nonce and box";
    case wire_error::malformed_message:
        return "MESSAGE command is shorter than its nonce, box and flags";
    case wire_error::cryptographic:
        return "a CURVE box did not open (wrong key, or a tampered or replayed command)";
    case wire_error::key_exchange: return "CURVE vouch does not name the client's short-term key";
    case wire_error::invalid_sequence:
        return "CURVE nonce not above the previous one (replayed or reordered command)";
    case wire_error::nonce_exhausted: return "CURVE nonce space of this connection is used up";
    case wire_error::no_zap_handler:
        return "no ZAP handler bound at inproc://zeromq.zap.01, and this mechanism needs one";
    case wire_error::auth_failed: return "authentication refused (ZAP status 300, 400 or 500)";
    case wire_error::zap_malformed_reply:
        return "ZAP reply is not 7 frames with MORE set on all but the last";
    case wire_error::zap_unspecified: return "ZAP reply's delimiter frame is not empty";
    case wire_error::zap_bad_version: return "ZAP reply version is not 1.0";
    case wire_error::zap_bad_request_id: return "ZAP reply request id does not match the request";
    case wire_error::zap_invalid_status_code:
        return "ZAP reply status code is not 200, 300, 400 or 500";
    case wire_error::zap_invalid_metadata: return "ZAP reply metadata is malformed";
    case wire_error::buffer_too_small: return "output buffer too small for the encoding";
    }
    return "unknown wire error";
}

}  // namespace zlink::wire
