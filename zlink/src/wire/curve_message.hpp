// CURVE traffic after the handshake (RFC 26 "MESSAGE", libzmq 4.3.5's layout):
//
//   frame      = flags 0 (libzmq sends MESSAGE in a plain frame, never with the
//                COMMAND or MORE flag; any frame flags are accepted on receipt)
//   frame body = %d7 "MESSAGE" short-nonce(8) box
//   box        = Box [flags(1) payload](C'->S' or S'->C'), nonce prefix
//                "CurveZMQMESSAGEC" from the client, "CurveZMQMESSAGES" from the server
//   flags      = bit 0 MORE, bit 1 COMMAND (PING/PONG/SUBSCRIBE/CANCEL travel here too)
//
// Each side counts its own short nonces upwards and refuses a received nonce that
// is not above the last one it accepted (replayed or reordered MESSAGE: the
// connection fails with invalid_sequence). The shared key is wiped on destruction.
#pragma once

#include "wire/curve_box.hpp"
#include "wire/handshake.hpp"

#include <cstdint>

namespace zlink::wire {

// Octets a MESSAGE frame body adds to its payload: name, nonce, MAC, flags.
inline constexpr std::size_t curve_message_overhead = 8 + 8 + curve_box::mac_size + 1;

class curve_message_codec final : public frame_transform {
public:
    // `shared`: crypto_box_beforenm of the short-term keys. `next_nonce`: our next
    // short nonce; `peer_nonce`: the last one the peer used in the handshake.
    curve_message_codec(const curve_key &shared, bool server, std::uint64_t next_nonce,
                        std::uint64_t peer_nonce) noexcept;
    ~curve_message_codec() override;
    curve_message_codec(const curve_message_codec &) = delete;
    curve_message_codec &operator=(const curve_message_codec &) = delete;

    // Errors: nonce_exhausted.
    wire_error seal(std::uint8_t flags, std::span<const std::uint8_t> body,
                    std::vector<std::uint8_t> &out) override;
    // Errors: malformed_command, unexpected_command (not MESSAGE), malformed_message,
    // invalid_sequence, cryptographic.
    // Opens a copy of `frame_body` (open_in_place on it) into `body`.
    wire_error open(std::span<const std::uint8_t> frame_body, std::uint8_t &flags,
                    std::vector<std::uint8_t> &body) override;
    // Same checks and errors; decrypts in place, `body` is frame_body's tail
    // after the flags octet. On an error the frame body may be overwritten.
    wire_error open_in_place(std::span<std::uint8_t> frame_body, std::uint8_t &flags,
                             std::span<std::uint8_t> &body) override;

private:
    curve_key shared_;
    const char *send_prefix_;
    const char *recv_prefix_;
    std::uint64_t next_nonce_;
    std::uint64_t peer_nonce_;
};

}  // namespace zlink::wire
