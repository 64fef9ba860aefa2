// CURVE mechanism, server side (RFC 26, as libzmq 4.3.5 speaks it).
//
//   C: HELLO     -> open Box[64 zeros](C'->S) with our secret key s
//   S: WELCOME   Box[S' + cookie](S->C'); cookie = nonce + Box[C' + s'](K)
//   C: INITIATE  -> recover C' and s' from the cookie, open Box[C + vouch + props],
//                   check the vouch names C'; ZAP request "CURVE" with C
//   S: READY     Box[our properties](S'->C'), or ERROR "400"/"500" after ZAP
//
// Cookie key rotation: K is drawn fresh for each WELCOME and wiped as soon as the
// INITIATE's cookie is opened, so a cookie is good for one connection and one use.
// Between WELCOME and INITIATE the server keeps no C' or s' of its own: it
// recovers both from the cookie, as the RFC intends.
//
// ZAP: asked when ZMQ_ZAP_DOMAIN is set or ZMQ_ZAP_ENFORCE_DOMAIN is off; without
// a handler the handshake goes on unless ZMQ_ZAP_ENFORCE_DOMAIN is set (libzmq's
// "Stonehouse" behaviour: encryption without authentication).
#pragma once

#include "wire/curve_message.hpp"
#include "wire/mechanism_base.hpp"

#include <memory>

namespace zlink::wire {

class curve_server final : public mechanism_base {
public:
    curve_server(const handshake_options &opts, const curve_key &secret_key, const zap_policy &zap);
    ~curve_server() override;

    const char *mechanism() const noexcept override { return "CURVE"; }
    frame_transform *transform() noexcept override { return codec_.get(); }

private:
    void on_command(const command_view &cmd) override;
    void on_zap_accepted() override { send_ready(); }
    void on_zap_missing() override;
    void on_hello(std::span<const std::uint8_t> body);
    void send_welcome();
    void on_initiate(std::span<const std::uint8_t> body);
    bool open_cookie(std::span<const std::uint8_t> cookie);
    bool open_initiate_box(std::span<const std::uint8_t> body, std::vector<std::uint8_t> &plain);
    void send_ready();

    enum class state : std::uint8_t { expect_hello, expect_initiate, ready };
    state state_ = state::expect_hello;
    zap_policy zap_;
    curve_key secret_{};
    curve_key client_short_{};  // C': from HELLO until WELCOME, then from the cookie
    curve_key short_secret_{};  // s': likewise
    curve_key short_public_{};
    curve_key cookie_key_{};  // K
    curve_key shared_{};
    std::uint64_t peer_nonce_ = 0;
    std::uint64_t next_nonce_ = 1;
    std::unique_ptr<curve_message_codec> codec_;
};

}  // namespace zlink::wire
