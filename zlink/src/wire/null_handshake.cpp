// NULL-mechanism handshake: greeting exchange, (ZAP), then READY both ways (RFC 37).
#include "wire/null_handshake.hpp"

namespace zlink::wire {

// RFC 37: "When a peer uses the NULL security mechanism, the as-server field
// MUST be zero."
null_handshake::null_handshake(const handshake_options &opts, const zap_policy &zap)
    : mechanism_base(opts, "NULL", false), zap_(zap) {}

void null_handshake::on_greeting() {
    // libzmq asks ZAP about NULL peers only when the socket has a ZAP domain.
    if (zap_.domain_set)
        return ask_zap("NULL", {});
    send_ready();
}

void null_handshake::on_zap_missing() {
    if (zap_.enforce_domain)
        return fail(wire_error::no_zap_handler);
    send_ready();
}

void null_handshake::send_ready() {
    std::vector<std::uint8_t> body{5, 'R', 'E', 'A', 'D', 'Y'};
    const auto props = our_properties();
    body.insert(body.end(), props.begin(), props.end());
    send_command(body);
}

void null_handshake::on_command(const command_view &cmd) {
    if (cmd.kind == command_kind::error)
        return on_error_command(cmd);
    if (cmd.kind != command_kind::ready)
        return fail(wire_error::unexpected_command, cmd.name);
    if (accept_properties(cmd.data))
        finish();
}

}  // namespace zlink::wire
