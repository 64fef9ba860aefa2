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
#pragma once

#include "wire/mechanism_base.hpp"

namespace zlink::wire {

class plain_server final : public mechanism_base {
public:
    explicit plain_server(const handshake_options& opts);

    const char* mechanism() const noexcept override { return "PLAIN"; }

private:
    void on_command(const command_view& cmd) override;
    void on_zap_accepted() override;
    void on_hello(const command_view& cmd);
    void on_initiate(const command_view& cmd);

    enum class state : std::uint8_t { expect_hello, expect_initiate };
    state state_ = state::expect_hello;
};

} // namespace zlink::wire
