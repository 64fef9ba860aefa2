// PLAIN server: HELLO -> ZAP -> WELCOME -> INITIATE -> READY.
#include "wire/plain_server.hpp"

namespace zlink::wire {

plain_server::plain_server(const handshake_options &opts) : mechanism_base(opts, "PLAIN", true) {}

void plain_server::on_command(const command_view &cmd) {
    if (cmd.name == "HELLO" && state_ == state::expect_hello)
        return on_hello(cmd);
    if (cmd.name == "INITIATE" && state_ == state::expect_initiate)
        return on_initiate(cmd);
    fail(wire_error::unexpected_command, cmd.name);
}

// HELLO data: username-size(1) username password-size(1) password, nothing after.
void plain_server::on_hello(const command_view &cmd) {
    const auto d = cmd.data;
    if (d.empty() || d[0] > d.size() - 1)
        return fail(wire_error::malformed_hello);
    const auto user = d.subspan(1, d[0]);
    const auto rest = d.subspan(1 + user.size());
    if (rest.empty() || rest[0] != rest.size() - 1)
        return fail(wire_error::malformed_hello);
    const auto password = rest.subspan(1);
    ask_zap("PLAIN", {{user.begin(), user.end()}, {password.begin(), password.end()}});
}

void plain_server::on_zap_accepted() {
    send_command(std::span(reinterpret_cast<const std::uint8_t *>("\x07WELCOME"), 8));
    state_ = state::expect_initiate;
}

bool parse_libzmq_plain_error(std::span<const std::uint8_t> body,
                              std::string_view &reason) noexcept {
    const auto n = libzmq_plain_error_prefix.size();
    if (body.size() < n + 1 ||
        std::string_view(reinterpret_cast<const char *>(body.data()), n) !=
            libzmq_plain_error_prefix ||
        body[n] > body.size() - n - 1)
        return false;
    reason = {reinterpret_cast<const char *>(body.data()) + n + 1, body[n]};
    return true;
}

void plain_server::send_refusal(std::string_view status_code) {
    std::vector<std::uint8_t> body(libzmq_plain_error_prefix.begin(),
                                   libzmq_plain_error_prefix.end());
    body.push_back(static_cast<std::uint8_t>(status_code.size()));
    body.insert(body.end(), status_code.begin(), status_code.end());
    send_command(body);
}

void plain_server::on_initiate(const command_view &cmd) {
    if (!accept_properties(cmd.data))
        return;
    std::vector<std::uint8_t> body{5, 'R', 'E', 'A', 'D', 'Y'};
    const auto props = our_properties();
    body.insert(body.end(), props.begin(), props.end());
    send_command(body);
    finish();
}

}  // namespace zlink::wire
