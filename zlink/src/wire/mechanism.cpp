// The mechanism factory and libzmq's monitor values for handshake failures.
#include "wire/mechanism.hpp"

#include "wire/null_handshake.hpp"
#include "wire/plain_client.hpp"
#include "wire/plain_server.hpp"
#ifdef ZLINK_HAVE_CURVE
#include "wire/curve_client.hpp"
#include "wire/curve_server.hpp"
#endif

namespace zlink::wire {

namespace {

// ZMQ_PROTOCOL_ERROR_* values of libzmq 4.3.5's zmq.h (the wire layer does not
// include zmq.h; these are protocol facts, like the command names).
namespace protocol_error {
constexpr std::uint32_t zmtp_unspecified = 0x10000000;
constexpr std::uint32_t zmtp_unexpected_command = 0x10000001;
constexpr std::uint32_t zmtp_invalid_sequence = 0x10000002;
constexpr std::uint32_t zmtp_key_exchange = 0x10000003;
constexpr std::uint32_t zmtp_malformed_command_unspecified = 0x10000011;
constexpr std::uint32_t zmtp_malformed_command_message = 0x10000012;
constexpr std::uint32_t zmtp_malformed_command_hello = 0x10000013;
constexpr std::uint32_t zmtp_malformed_command_initiate = 0x10000014;
constexpr std::uint32_t zmtp_malformed_command_error = 0x10000015;
constexpr std::uint32_t zmtp_malformed_command_ready = 0x10000016;
constexpr std::uint32_t zmtp_malformed_command_welcome = 0x10000017;
constexpr std::uint32_t zmtp_invalid_metadata = 0x10000018;
constexpr std::uint32_t zmtp_cryptographic = 0x11000001;
constexpr std::uint32_t zmtp_mechanism_mismatch = 0x11000002;
constexpr std::uint32_t zap_unspecified = 0x20000000;
constexpr std::uint32_t zap_malformed_reply = 0x20000001;
constexpr std::uint32_t zap_bad_request_id = 0x20000002;
constexpr std::uint32_t zap_bad_version = 0x20000003;
constexpr std::uint32_t zap_invalid_status_code = 0x20000004;
constexpr std::uint32_t zap_invalid_metadata = 0x20000005;
}  // namespace protocol_error

constexpr std::uint32_t efault = 14;  // what libzmq reports when no ZAP handler answers

std::uint32_t protocol_value(wire_error e) noexcept {
    namespace pe = protocol_error;
    switch (e) {
    case wire_error::mechanism_mismatch: return pe::zmtp_mechanism_mismatch;
    case wire_error::unexpected_command:
    case wire_error::unexpected_message: return pe::zmtp_unexpected_command;
    case wire_error::malformed_command: return pe::zmtp_malformed_command_unspecified;
    case wire_error::malformed_metadata:
    case wire_error::missing_socket_type:
    case wire_error::unknown_socket_type:
    case wire_error::incompatible_socket_type: return pe::zmtp_invalid_metadata;
    case wire_error::malformed_error_command: return pe::zmtp_malformed_command_error;
    case wire_error::malformed_hello: return pe::zmtp_malformed_command_hello;
    case wire_error::malformed_welcome: return pe::zmtp_malformed_command_welcome;
    case wire_error::malformed_initiate: return pe::zmtp_malformed_command_initiate;
    case wire_error::malformed_ready: return pe::zmtp_malformed_command_ready;
    case wire_error::malformed_message: return pe::zmtp_malformed_command_message;
    case wire_error::cryptographic: return pe::zmtp_cryptographic;
    case wire_error::key_exchange: return pe::zmtp_key_exchange;
    case wire_error::invalid_sequence:
    case wire_error::nonce_exhausted: return pe::zmtp_invalid_sequence;
    case wire_error::zap_malformed_reply: return pe::zap_malformed_reply;
    case wire_error::zap_unspecified: return pe::zap_unspecified;
    case wire_error::zap_bad_version: return pe::zap_bad_version;
    case wire_error::zap_bad_request_id: return pe::zap_bad_request_id;
    case wire_error::zap_invalid_status_code: return pe::zap_invalid_status_code;
    case wire_error::zap_invalid_metadata: return pe::zap_invalid_metadata;
    default: return pe::zmtp_unspecified;
    }
}

std::unique_ptr<handshake> make_curve(const handshake_options &zmtp, const security_config &sec) {
#ifdef ZLINK_HAVE_CURVE
    if (sec.as_server)
        return std::make_unique<curve_server>(zmtp, sec.curve_secret, sec.zap);
    return std::make_unique<curve_client>(zmtp, sec.curve_public, sec.curve_secret,
                                          sec.curve_server);
#else
    (void)zmtp;
    (void)sec;
    return nullptr;
#endif
}

}  // namespace

bool curve_available() noexcept {
#ifdef ZLINK_HAVE_CURVE
    return true;
#else
    return false;
#endif
}

std::unique_ptr<handshake> make_handshake(const handshake_options &zmtp,
                                          const security_config &sec) {
    switch (sec.kind) {
    case mechanism_kind::null: return std::make_unique<null_handshake>(zmtp, sec.zap);
    case mechanism_kind::plain:
        if (sec.as_server)
            return std::make_unique<plain_server>(zmtp);
        return std::make_unique<plain_client>(zmtp, sec.plain_username, sec.plain_password);
    case mechanism_kind::curve: return make_curve(zmtp, sec);
    }
    return nullptr;
}

failure_report classify_failure(wire_error e, std::string_view detail) noexcept {
    if (e == wire_error::auth_failed) {
        std::uint32_t code = 0;
        for (char c : detail)
            code = code * 10 + static_cast<std::uint32_t>(c - '0');
        return {failure_event::auth, code};
    }
    if (e == wire_error::no_zap_handler)
        return {failure_event::no_detail, efault};
    return {failure_event::protocol, protocol_value(e)};
}

}  // namespace zlink::wire
