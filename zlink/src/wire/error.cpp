#include "wire/error.hpp"

namespace zlink::wire {

const char* to_string(wire_error e) noexcept
{
    switch (e) {
    case wire_error::none: return "no error";
    case wire_error::bad_signature:
        return "peer greeting lacks the ZMTP 3 signature (%xFF..%x7F): ZMTP 1.0 or not ZMTP";
    case wire_error::unsupported_version:
        return "peer speaks ZMTP 1.x/2.x; only ZMTP 3.0 and later are accepted";
    case wire_error::mechanism_mismatch:
        return "peer security mechanism differs from ours; only NULL is supported";
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
    case wire_error::missing_socket_type:
        return "peer READY has no Socket-Type property";
    case wire_error::unknown_socket_type:
        return "peer Socket-Type is not one zlink supports";
    case wire_error::incompatible_socket_type:
        return "peer Socket-Type may not connect to this socket type (ZMTP RFC 37 table)";
    case wire_error::peer_sent_error:
        return "peer refused the handshake with an ERROR command";
    case wire_error::unexpected_command:
        return "unexpected command during the handshake; only READY or ERROR allowed";
    case wire_error::unexpected_message:
        return "message frame received before the handshake completed";
    case wire_error::handshake_too_large:
        return "handshake command larger than the handshake limit";
    case wire_error::buffer_too_small:
        return "output buffer too small for the encoding";
    }
    return "unknown wire error";
}

} // namespace zlink::wire
