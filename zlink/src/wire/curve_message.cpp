// CURVE MESSAGE sealing and opening, in place where libsodium allows it.
#include "wire/curve_message.hpp"

#include "wire/frame.hpp"

#include <cstring>
#include <limits>

namespace zlink::wire {

namespace {

constexpr std::uint8_t wire_more = 0x01;     // in the encrypted flags octet
constexpr std::uint8_t wire_command = 0x02;  // libzmq's msg_t::command bit
constexpr std::size_t name_size = 8;         // "\x07MESSAGE"
constexpr std::size_t nonce_at = name_size;
constexpr std::size_t mac_at = nonce_at + 8;
constexpr std::size_t text_at = mac_at + curve_box::mac_size;

std::uint8_t to_wire_flags(std::uint8_t frame_flags) noexcept {
    return static_cast<std::uint8_t>(((frame_flags & frame_flag::more) ? wire_more : 0) |
                                     ((frame_flags & frame_flag::command) ? wire_command : 0));
}

std::uint8_t from_wire_flags(std::uint8_t wire_flags) noexcept {
    return static_cast<std::uint8_t>(((wire_flags & wire_more) ? frame_flag::more : 0) |
                                     ((wire_flags & wire_command) ? frame_flag::command : 0));
}

}  // namespace

curve_message_codec::curve_message_codec(const curve_key &shared, bool server,
                                         std::uint64_t next_nonce,
                                         std::uint64_t peer_nonce) noexcept
    : shared_(shared), send_prefix_(server ? "CurveZMQMESSAGES" : "CurveZMQMESSAGEC"),
      recv_prefix_(server ? "CurveZMQMESSAGEC" : "CurveZMQMESSAGES"), next_nonce_(next_nonce),
      peer_nonce_(peer_nonce) {}

curve_message_codec::~curve_message_codec() { curve_box::wipe(shared_); }

// The body is copied once, straight into `out` (no zero-filled room first), and
// encrypted there.
wire_error curve_message_codec::seal(std::uint8_t flags, std::span<const std::uint8_t> body,
                                     std::vector<std::uint8_t> &out) {
    if (next_nonce_ == std::numeric_limits<std::uint64_t>::max())
        return wire_error::nonce_exhausted;
    const std::uint64_t n = next_nonce_++;
    const std::size_t frame_body = curve_message_overhead + body.size();
    // Frame header, name, nonce, room for the MAC, flags octet.
    std::uint8_t head[max_header_size + curve_message_overhead] = {};
    // As libzmq 4.3.5 sends it: a frame without the COMMAND flag. (libzmq keeps a
    // received frame's COMMAND flag after opening it and would then drop the
    // message as an unknown command.)
    const std::size_t h = write_frame_header(head, frame_body, false, false);
    std::uint8_t *p = head + h;
    std::memcpy(p, "\x07MESSAGE", name_size);
    curve_box::store_u64(p + nonce_at, n);
    p[text_at] = to_wire_flags(flags);
    const std::size_t at = out.size();
    out.insert(out.end(), head, head + h + curve_message_overhead);
    out.insert(out.end(), body.begin(), body.end());
    p = out.data() + at + h;
    const std::span<std::uint8_t> text(p + text_at, 1 + body.size());
    curve_box::seal_shared_in_place(
        text, std::span<std::uint8_t, curve_box::mac_size>(p + mac_at, curve_box::mac_size),
        curve_box::short_nonce(send_prefix_, n), shared_);
    return wire_error::none;
}

wire_error curve_message_codec::open(std::span<const std::uint8_t> frame_body, std::uint8_t &flags,
                                     std::vector<std::uint8_t> &body) {
    std::vector<std::uint8_t> copy(frame_body.begin(), frame_body.end());
    std::span<std::uint8_t> plain;
    const wire_error e = open_in_place(copy, flags, plain);
    if (e == wire_error::none)
        body.assign(plain.begin(), plain.end());
    else
        body.clear();
    return e;
}

// Checks in libzmq's order: command structure, name, size, nonce, box. The box is
// verified before anything is decrypted (libsodium), so a refused frame yields no
// plaintext.
wire_error curve_message_codec::open_in_place(std::span<std::uint8_t> frame_body,
                                              std::uint8_t &flags, std::span<std::uint8_t> &body) {
    if (frame_body.size() <= 1 || frame_body.size() <= frame_body[0])
        return wire_error::malformed_command;
    if (frame_body.size() < name_size ||
        std::memcmp(frame_body.data(), "\x07MESSAGE", name_size) != 0)
        return wire_error::unexpected_command;
    if (frame_body.size() < curve_message_overhead)
        return wire_error::malformed_message;
    const std::uint64_t n = curve_box::load_u64(frame_body.data() + nonce_at);
    if (n <= peer_nonce_)
        return wire_error::invalid_sequence;
    const auto text = frame_body.subspan(text_at);
    const std::span<const std::uint8_t, curve_box::mac_size> mac(frame_body.data() + mac_at,
                                                                 curve_box::mac_size);
    if (!curve_box::open_shared_in_place(text, mac, curve_box::short_nonce(recv_prefix_, n),
                                         shared_))
        return wire_error::cryptographic;
    peer_nonce_ = n;
    flags = from_wire_flags(text[0]);
    body = text.subspan(1);
    return wire_error::none;
}

}  // namespace zlink::wire
