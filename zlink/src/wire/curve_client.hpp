// CURVE mechanism, client side (RFC 26 CurveZMQ over ZMTP, as libzmq 4.3.5 speaks it).
//
//   C: HELLO    version 1.0, padding, C', Box[64 zeros](C'->S)
//   S: WELCOME  Box[S' + cookie](S->C')
//   C: INITIATE cookie, Box[C + vouch + properties](C'->S'), vouch = Box[C' + S](C->S')
//   S: READY    Box[properties](S'->C')   (or ERROR with a ZAP status code)
//
// C/c is our long-term key pair, S the server's public key (ZMQ_CURVE_SERVERKEY),
// C'/c' a key pair made for this connection only. After done(), transform()
// seals and opens MESSAGE commands with the precomputed C'/S' key.
#pragma once

#include "wire/curve_message.hpp"
#include "wire/mechanism_base.hpp"

#include <memory>

namespace zlink::wire {

class curve_client final : public mechanism_base {
public:
    curve_client(const handshake_options &opts, const curve_key &public_key,
                 const curve_key &secret_key, const curve_key &server_key);
    ~curve_client() override;

    const char *mechanism() const noexcept override { return "CURVE"; }
    frame_transform *transform() noexcept override { return codec_.get(); }

private:
    void on_greeting() override;
    void on_command(const command_view &cmd) override;
    void on_welcome(std::span<const std::uint8_t> body);
    void send_initiate();
    void on_ready(std::span<const std::uint8_t> body);

    enum class state : std::uint8_t { expect_welcome, expect_ready };
    state state_ = state::expect_welcome;
    curve_key public_{}, secret_{}, server_{};
    curve_key short_public_{}, short_secret_{};
    curve_key server_short_{};
    std::array<std::uint8_t, 96> cookie_{};
    curve_key shared_{};
    std::uint64_t next_nonce_ = 1;
    std::unique_ptr<curve_message_codec> codec_;
};

}  // namespace zlink::wire
