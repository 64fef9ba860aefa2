// ZAP (RFC 27 "ZeroMQ Authentication Protocol") messages as the session
// exchanges them with the handler bound at inproc://zeromq.zap.01, laid out as
// libzmq 4.3.5 sends them: an empty delimiter frame first (the handler is
// usually a REP socket), then
//
//   request: "1.0", request id, domain, address, identity, mechanism, credentials...
//   reply:   "1.0", request id, status code, status text, user id, metadata
//
// `identity` is the ZMQ_ROUTING_ID of the socket asking (libzmq sends its own
// socket's, not the peer's). The session moves these frames through a pipe;
// what they mean to the handshake is wire::zap_request / wire::zap_reply.
#pragma once

#include "wire/error.hpp"
#include "wire/handshake.hpp"

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace zlink::wire {

inline constexpr std::string_view zap_endpoint = "inproc://zeromq.zap.01";
inline constexpr std::string_view zap_inproc_name = zap_endpoint.substr(9);  // "zeromq.zap.01"
inline constexpr std::string_view zap_version = "1.0";
// libzmq sends one request per connection and always numbers it "1".
inline constexpr std::string_view zap_request_id = "1";
inline constexpr std::size_t zap_reply_frames = 7;  // delimiter included

using zap_frame = std::vector<std::uint8_t>;

// The request's frames, delimiter first; every frame but the last has MORE.
std::vector<zap_frame> zap_request_frames(const zap_request &request, std::string_view domain,
                                          std::string_view address,
                                          std::span<const std::uint8_t> identity);

// One received reply frame and whether MORE was set on it.
struct zap_frame_view {
    std::span<const std::uint8_t> body;
    bool more = false;
};

// Checks a whole reply as libzmq does and fills `out`. Errors:
// zap_malformed_reply (not 7 frames, or MORE missing before / present on the
// last), zap_unspecified (delimiter not empty), zap_bad_version,
// zap_bad_request_id, zap_invalid_status_code (not 200/300/400/500),
// zap_invalid_metadata.
wire_error parse_zap_reply(std::span<const zap_frame_view> frames, zap_reply &out);

// True for a handshake refused by a ZAP 300 (temporary failure): no ERROR is
// sent (RFC 27, CurveZMQ) and, as in libzmq 4.3.5, the connection is not closed
// either; the handshake timer or the peer ends it.
bool zap_holds_connection(wire_error error, std::string_view detail) noexcept;

}  // namespace zlink::wire
