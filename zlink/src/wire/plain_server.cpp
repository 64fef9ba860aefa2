// PLAIN server: HELLO -> ZAP -> WELCOME -> INITIATE -> READY.
#include "wire/plain_server.hpp"

namespace zlink::wire {

plain_server::plain_server(const handshake_options& opts) : mechanism_base(opts, "PLAIN", true) {}

void plain_server::on_command(const command_view& cmd)
{
    if (cmd.name == "HELLO" && state_ == state::expect_hello)
        return on_hello(cmd);
    if (cmd.name == "INITIATE" && state_ == state::expect_initiate)
        return on_initiate(cmd);
    fail(wire_error::unexpected_command, cmd.name);
}

// HELLO data: username-size(1) username password-size(1) password, nothing after.
void plain_server::on_hello(const command_view& cmd)
{
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

void plain_server::on_zap_accepted()
{
    send_command(std::span(reinterpret_cast<const std::uint8_t*>("\x07WELCOME"), 8));
    state_ = state::expect_initiate;
}

void plain_server::on_initiate(const command_view& cmd)
{
    if (!accept_properties(cmd.data))
        return;
    std::vector<std::uint8_t> body{5, 'R', 'E', 'A', 'D', 'Y'};
    const auto props = our_properties();
    body.insert(body.end(), props.begin(), props.end());
    send_command(body);
    finish();
}

} // namespace zlink::wire
