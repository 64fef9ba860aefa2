// CURVE client: HELLO, WELCOME -> INITIATE, READY -> done (offsets from RFC 26).
#include "wire/curve_client.hpp"

#include <cstring>

namespace zlink::wire {

namespace {

constexpr std::size_t hello_size = 200;
constexpr std::size_t welcome_size = 168;
constexpr std::size_t ready_min_size = 6 + 8 + curve_box::mac_size;

}  // namespace

curve_client::curve_client(const handshake_options &opts, const curve_key &public_key,
                           const curve_key &secret_key, const curve_key &server_key)
    : mechanism_base(opts, "CURVE", false), public_(public_key), secret_(secret_key),
      server_(server_key) {
    curve_box::ready();
    curve_box::keypair(short_public_, short_secret_);
}

curve_client::~curve_client() {
    curve_box::wipe(secret_);
    curve_box::wipe(short_secret_);
    curve_box::wipe(shared_);
    curve_box::wipe(cookie_);
}

// hello = %d5 "HELLO" %x1 %x0 72%x00 C'(32) nonce(8) Box[64 zeros](C'->S)(80)
void curve_client::on_greeting() {
    std::array<std::uint8_t, hello_size> hello{};
    std::memcpy(hello.data(), "\x05HELLO\x01\x00", 8);
    std::memcpy(hello.data() + 80, short_public_.data(), 32);
    const std::uint64_t n = next_nonce_++;
    curve_box::store_u64(hello.data() + 112, n);
    const std::array<std::uint8_t, 64> zeros{};
    curve_box::seal(std::span(hello).subspan(120), zeros,
                    curve_box::short_nonce("CurveZMQHELLO---", n), server_, short_secret_);
    send_command(hello);
}

void curve_client::on_command(const command_view &cmd) {
    if (cmd.kind == command_kind::error)
        return on_error_command(cmd);
    if (cmd.name == "WELCOME" && state_ == state::expect_welcome)
        return on_welcome(body_of(cmd));
    if (cmd.kind == command_kind::ready && state_ == state::expect_ready)
        return on_ready(body_of(cmd));
    fail(wire_error::unexpected_command, cmd.name);
}

// welcome = %d7 "WELCOME" nonce(16) Box[S' + cookie](S->C')(144)
void curve_client::on_welcome(std::span<const std::uint8_t> body) {
    // libzmq reports a WELCOME of the wrong size as a cryptographic failure.
    if (body.size() != welcome_size)
        return fail(wire_error::cryptographic, "WELCOME is not 168 octets");
    std::array<std::uint8_t, 128> plain{};
    const bool ok = curve_box::open(plain, body.subspan(24, 144),
                                    curve_box::long_nonce("WELCOME-", body.subspan(8, 16)), server_,
                                    short_secret_);
    if (!ok)
        return fail(wire_error::cryptographic, "WELCOME box does not open (wrong server key?)");
    std::memcpy(server_short_.data(), plain.data(), 32);
    std::memcpy(cookie_.data(), plain.data() + 32, 96);
    curve_box::wipe(plain);
    curve_box::precompute(shared_, server_short_, short_secret_);
    send_initiate();
    state_ = state::expect_ready;
}

// initiate = %d8 "INITIATE" cookie(96) nonce(8) Box[C + vouch-nonce + vouch + props](C'->S')
void curve_client::send_initiate() {
    std::array<std::uint8_t, 64> vouch_plain{};
    std::memcpy(vouch_plain.data(), short_public_.data(), 32);
    std::memcpy(vouch_plain.data() + 32, server_.data(), 32);
    std::array<std::uint8_t, 16> vouch_tail{};
    curve_box::random_bytes(vouch_tail);

    const auto props = our_properties();
    std::vector<std::uint8_t> plain(32 + 16 + 80 + props.size());
    std::memcpy(plain.data(), public_.data(), 32);
    std::memcpy(plain.data() + 32, vouch_tail.data(), 16);
    curve_box::seal(std::span(plain).subspan(48, 80), vouch_plain,
                    curve_box::long_nonce("VOUCH---", vouch_tail), server_short_, secret_);
    std::copy(props.begin(), props.end(), plain.begin() + 128);

    std::vector<std::uint8_t> body(9 + 96 + 8 + plain.size() + curve_box::mac_size);
    std::memcpy(body.data(), "\x08INITIATE", 9);
    std::memcpy(body.data() + 9, cookie_.data(), 96);
    const std::uint64_t n = next_nonce_++;
    curve_box::store_u64(body.data() + 105, n);
    curve_box::seal_shared(std::span(body).subspan(113), plain,
                           curve_box::short_nonce("CurveZMQINITIATE", n), shared_);
    curve_box::wipe(std::span(plain));
    send_command(body);
}

// ready = %d5 "READY" nonce(8) Box[props](S'->C')
void curve_client::on_ready(std::span<const std::uint8_t> body) {
    if (body.size() < ready_min_size)
        return fail(wire_error::malformed_ready);
    const std::uint64_t n = curve_box::load_u64(body.data() + 6);
    std::vector<std::uint8_t> props(body.size() - ready_min_size);
    if (!curve_box::open_shared(props, body.subspan(14),
                                curve_box::short_nonce("CurveZMQREADY---", n), shared_))
        return fail(wire_error::cryptographic, "READY box does not open");
    if (!accept_properties(props))
        return;
    codec_ = std::make_unique<curve_message_codec>(shared_, false, next_nonce_, n);
    finish();
}

}  // namespace zlink::wire
