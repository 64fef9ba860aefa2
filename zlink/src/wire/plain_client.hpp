// PLAIN mechanism, client side (RFC 24): user name and password in clear.
//
//   C: HELLO (username, password)     S: WELCOME
//   C: INITIATE (our properties)      S: READY (its properties) or ERROR
//
// The server checks the credentials through ZAP; a refusal arrives as an ERROR
// whose reason is the ZAP status code ("400"), reported as auth_failed. Both
// ERROR forms are accepted: RFC 37's and libzmq 4.3.5's PLAIN form, whose first
// two octets are 0x5E 'R' (its source writes "\x05ERROR", a hex escape that
// swallows the 'E'): body = 0x5E "RROR" reason-size reason.
#pragma once

#include "wire/mechanism_base.hpp"

#include <string>

namespace zlink::wire {

class plain_client final : public mechanism_base {
public:
    // `username` and `password` are at most 255 octets each (ZMQ_PLAIN_* refuse longer).
    plain_client(const handshake_options &opts, std::string username, std::string password);
    ~plain_client() override;

    const char *mechanism() const noexcept override { return "PLAIN"; }

private:
    void on_greeting() override;
    void on_command(const command_view &cmd) override;
    void on_welcome(const command_view &cmd);
    void on_ready(const command_view &cmd);
    bool on_unparsed_command(std::span<const std::uint8_t> body) override;

    enum class state : std::uint8_t { expect_welcome, expect_ready };
    state state_ = state::expect_welcome;
    std::string username_;
    std::string password_;
};

}  // namespace zlink::wire
