// PLAIN mechanism, server side (RFC 24).
//
//   C: HELLO (username, password)  -> ZAP request "PLAIN" username password
//   ZAP 200                        -> S: WELCOME
//   C: INITIATE (its properties)   -> S: READY (ours); done
//   ZAP 400/500                    -> S: ERROR "400"/"500"; failed (auth_failed)
//   ZAP 300                        -> failed without ERROR (temporary failure)
//
// PLAIN without a ZAP handler always fails (no_zap_handler): there would be no one
// to check the password, as in libzmq.
//
// The refusal ERROR is written in libzmq 4.3.5's PLAIN form (0x5E "RROR" reason,
// see plain_client.hpp): the only form a libzmq PLAIN client recognises, so it
// reports HANDSHAKE_FAILED_AUTH with the status code; an RFC-strict client sees a
// malformed command instead, which refuses it just the same.
#pragma once

#include "wire/mechanism_base.hpp"

#include <span>
#include <string_view>

namespace zlink::wire {

// libzmq 4.3.5's PLAIN ERROR body: 0x5E "RROR" reason-size reason.
inline constexpr std::string_view libzmq_plain_error_prefix{"\x5E"
                                                            "RROR",
                                                            5};
// True (and `reason` set) for a body in that form.
bool parse_libzmq_plain_error(std::span<const std::uint8_t> body,
                              std::string_view &reason) noexcept;

class plain_server final : public mechanism_base {
public:
    explicit plain_server(const handshake_options &opts);

    const char *mechanism() const noexcept override { return "PLAIN"; }

private:
    void on_command(const command_view &cmd) override;
    void on_zap_accepted() override;
    void send_refusal(std::string_view status_code) override;
    void on_hello(const command_view &cmd);
    void on_initiate(const command_view &cmd);

    enum class state : std::uint8_t { expect_hello, expect_initiate };
    state state_ = state::expect_hello;
};

}  // namespace zlink::wire
