// PLAIN client: HELLO, then INITIATE once WELCOMEd, done on READY.
#include "wire/plain_client.hpp"

#include "wire/plain_server.hpp"  // parse_libzmq_plain_error

#include <algorithm>

namespace zlink::wire {

namespace {

void append(std::vector<std::uint8_t> &out, std::string_view s) {
    out.insert(out.end(), s.begin(), s.end());
}

}  // namespace

plain_client::plain_client(const handshake_options &opts, std::string username,
                           std::string password)
    : mechanism_base(opts, "PLAIN", false), username_(std::move(username)),
      password_(std::move(password)) {}

plain_client::~plain_client() { std::fill(password_.begin(), password_.end(), '\0'); }

// hello = command-size %d5 "HELLO" username password; each a 1-octet size + octets.
void plain_client::on_greeting() {
    std::vector<std::uint8_t> body;
    append(body, "\x05HELLO");
    body.push_back(static_cast<std::uint8_t>(username_.size()));
    append(body, username_);
    body.push_back(static_cast<std::uint8_t>(password_.size()));
    append(body, password_);
    send_command(body);
    std::fill(body.begin(), body.end(), std::uint8_t{0});
}

void plain_client::on_command(const command_view &cmd) {
    if (cmd.kind == command_kind::error)
        return on_error_command(cmd);
    if (cmd.name == "WELCOME" && state_ == state::expect_welcome)
        return on_welcome(cmd);
    if (cmd.kind == command_kind::ready && state_ == state::expect_ready)
        return on_ready(cmd);
    fail(wire_error::unexpected_command, cmd.name);
}

void plain_client::on_welcome(const command_view &cmd) {
    if (!cmd.data.empty())
        return fail(wire_error::malformed_welcome);
    std::vector<std::uint8_t> body;
    append(body, "\x08INITIATE");
    const auto props = our_properties();
    body.insert(body.end(), props.begin(), props.end());
    send_command(body);
    state_ = state::expect_ready;
}

bool plain_client::on_unparsed_command(std::span<const std::uint8_t> body) {
    std::string_view reason;
    if (!parse_libzmq_plain_error(body, reason))
        return false;
    on_error_reason(reason);
    return true;
}

void plain_client::on_ready(const command_view &cmd) {
    if (accept_properties(cmd.data))
        finish();
}

}  // namespace zlink::wire
