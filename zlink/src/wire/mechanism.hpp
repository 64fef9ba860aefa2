// Choosing a security mechanism (RFC 37 "Security Mechanisms") and describing how
// a handshake failed.
//
// The engine calls make_handshake() once per connection with the socket's
// security settings and never names a mechanism itself: NULL (RFC 37), PLAIN
// (RFC 24) or CURVE (RFC 26), client or server side, all behind wire::handshake.
// classify_failure() turns a failed handshake into the monitor event and value
// libzmq 4.3.5 reports for the same failure, so the engine can raise it without
// knowing which mechanism failed.
#pragma once

#include "wire/error.hpp"
#include "wire/handshake.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace zlink::wire {

// Values are libzmq's ZMQ_NULL, ZMQ_PLAIN, ZMQ_CURVE (what ZMQ_MECHANISM reads).
enum class mechanism_kind : std::uint8_t { null = 0, plain = 1, curve = 2 };

inline constexpr std::size_t curve_key_size = 32;
using curve_key = std::array<std::uint8_t, curve_key_size>;

// The socket's security options as the wire layer needs them.
struct security_config {
    mechanism_kind kind = mechanism_kind::null;
    bool as_server = false;      // ZMQ_PLAIN_SERVER / ZMQ_CURVE_SERVER
    std::string plain_username;  // client side, at most 255 octets each
    std::string plain_password;
    curve_key curve_public{};  // our long-term key pair
    curve_key curve_secret{};
    curve_key curve_server{};  // client side: the server's long-term public key
    zap_policy zap;
};

// True in a build with libsodium (ZLINK_WITH_CURVE).
bool curve_available() noexcept;

// A fresh handshake for one connection. Returns nullptr only when CURVE is asked
// of a build without libsodium (the socket options refuse that earlier, with
// ENOTSUP, so an engine never sees it).
std::unique_ptr<handshake> make_handshake(const handshake_options &zmtp,
                                          const security_config &sec);

// The monitor event a failure raises; the engine maps it to ZMQ_EVENT_HANDSHAKE_*.
enum class failure_event : std::uint8_t {
    protocol,   // ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL, value = ZMQ_PROTOCOL_ERROR_*
    auth,       // ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, value = ZAP status code (300/400/500)
    no_detail,  // ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL, value = errno (EFAULT: no ZAP handler)
};

struct failure_report {
    failure_event event = failure_event::protocol;
    std::uint32_t value = 0;
};

// `detail` is handshake::error_detail() (the status code for auth_failed).
failure_report classify_failure(wire_error e, std::string_view detail) noexcept;

}  // namespace zlink::wire
