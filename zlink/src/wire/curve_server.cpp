// CURVE server: HELLO -> WELCOME, INITIATE -> (ZAP) -> READY (offsets from RFC 26).
#include "wire/curve_server.hpp"

#include <cstring>

namespace zlink::wire {

namespace {

constexpr std::size_t hello_size = 200;
constexpr std::size_t initiate_min_size = 9 + 96 + 8 + curve_box::mac_size + 128;

}  // namespace

curve_server::curve_server(const handshake_options &opts, const curve_key &secret_key,
                           const zap_policy &zap)
    : mechanism_base(opts, "CURVE", true), zap_(zap), secret_(secret_key) {
    curve_box::ready();
}

curve_server::~curve_server() {
    curve_box::wipe(secret_);
    curve_box::wipe(short_secret_);
    curve_box::wipe(cookie_key_);
    curve_box::wipe(shared_);
}

void curve_server::on_command(const command_view &cmd) {
    if (cmd.name == "HELLO" && state_ == state::expect_hello)
        return on_hello(body_of(cmd));
    if (cmd.name == "INITIATE" && state_ == state::expect_initiate)
        return on_initiate(body_of(cmd));
    fail(wire_error::unexpected_command, cmd.name);
}

// hello = %d5 "HELLO" %x1 %x0 72%x00 C'(32) nonce(8) Box[64 zeros](C'->S)(80)
void curve_server::on_hello(std::span<const std::uint8_t> body) {
    if (body.size() != hello_size || body[6] != 1 || body[7] != 0)
        return fail(wire_error::malformed_hello);
    std::memcpy(client_short_.data(), body.data() + 80, 32);
    peer_nonce_ = curve_box::load_u64(body.data() + 112);
    std::array<std::uint8_t, 64> zeros{};
    if (!curve_box::open(zeros, body.subspan(120, 80),
                         curve_box::short_nonce("CurveZMQHELLO---", peer_nonce_), client_short_,
                         secret_))
        return fail(wire_error::cryptographic,
                    "HELLO box does not open (client has another server key?)");
    send_welcome();
    state_ = state::expect_initiate;
}

// welcome = %d7 "WELCOME" nonce(16) Box[S' + cookie](S->C')
// cookie  = nonce(16) Box[C' + s'](K)
void curve_server::send_welcome() {
    curve_box::keypair(short_public_, short_secret_);
    curve_box::random_bytes(cookie_key_);
    std::array<std::uint8_t, 64> cookie_plain{};
    std::memcpy(cookie_plain.data(), client_short_.data(), 32);
    std::memcpy(cookie_plain.data() + 32, short_secret_.data(), 32);

    std::array<std::uint8_t, 128> welcome_plain{};
    std::memcpy(welcome_plain.data(), short_public_.data(), 32);
    const auto cookie_tail = std::span(welcome_plain).subspan(32, 16);
    curve_box::random_bytes(cookie_tail);
    curve_box::seal_secret(std::span(welcome_plain).subspan(48, 80), cookie_plain,
                           curve_box::long_nonce("COOKIE--", cookie_tail), cookie_key_);

    std::array<std::uint8_t, 168> welcome{};
    std::memcpy(welcome.data(), "\x07WELCOME", 8);
    const auto welcome_tail = std::span(welcome).subspan(8, 16);
    curve_box::random_bytes(welcome_tail);
    curve_box::seal(std::span(welcome).subspan(24), welcome_plain,
                    curve_box::long_nonce("WELCOME-", welcome_tail), client_short_, secret_);
    send_command(welcome);

    // The cookie now holds C' and s'; forget our own copies until INITIATE.
    curve_box::wipe(cookie_plain);
    curve_box::wipe(welcome_plain);
    curve_box::wipe(short_secret_);
    curve_box::wipe(client_short_);
}

// initiate = %d8 "INITIATE" cookie(96) nonce(8) Box[C + vouch-nonce + vouch + props](C'->S')
void curve_server::on_initiate(std::span<const std::uint8_t> body) {
    if (body.size() < initiate_min_size)
        return fail(wire_error::malformed_initiate);
    if (!open_cookie(body.subspan(9, 96)))
        return fail(wire_error::cryptographic, "INITIATE cookie does not open");
    const std::uint64_t n = curve_box::load_u64(body.data() + 105);
    if (n <= peer_nonce_)
        return fail(wire_error::invalid_sequence);
    peer_nonce_ = n;
    std::vector<std::uint8_t> plain;
    if (!open_initiate_box(body, plain))
        return;
    const bool ok = accept_properties(std::span(plain).subspan(128));
    curve_key client_key{};
    std::memcpy(client_key.data(), plain.data(), 32);
    curve_box::wipe(std::span(plain));
    if (!ok)
        return;
    if (zap_.domain_set || !zap_.enforce_domain)
        return ask_zap("CURVE", {{client_key.begin(), client_key.end()}});
    send_ready();
}

// Recovers C' and s' with the cookie key, then wipes the key: one use only.
bool curve_server::open_cookie(std::span<const std::uint8_t> cookie) {
    std::array<std::uint8_t, 64> plain{};
    const bool ok = curve_box::open_secret(plain, cookie.subspan(16, 80),
                                           curve_box::long_nonce("COOKIE--", cookie.subspan(0, 16)),
                                           cookie_key_);
    curve_box::wipe(cookie_key_);
    if (!ok)
        return false;
    std::memcpy(client_short_.data(), plain.data(), 32);
    std::memcpy(short_secret_.data(), plain.data() + 32, 32);
    curve_box::wipe(plain);
    return curve_box::precompute(shared_, client_short_, short_secret_);
}

// Opens the INITIATE box and the vouch inside it; `plain` gets C, vouch, props.
bool curve_server::open_initiate_box(std::span<const std::uint8_t> body,
                                     std::vector<std::uint8_t> &plain) {
    const auto box = body.subspan(113);
    plain.assign(box.size() - curve_box::mac_size, 0);
    if (!curve_box::open_shared(plain, box, curve_box::short_nonce("CurveZMQINITIATE", peer_nonce_),
                                shared_)) {
        fail(wire_error::cryptographic, "INITIATE box does not open");
        return false;
    }
    curve_key client_key{};
    std::memcpy(client_key.data(), plain.data(), 32);
    std::array<std::uint8_t, 64> vouch{};
    if (!curve_box::open(vouch, std::span(plain).subspan(48, 80),
                         curve_box::long_nonce("VOUCH---", std::span(plain).subspan(32, 16)),
                         client_key, short_secret_)) {
        fail(wire_error::cryptographic, "INITIATE vouch does not open");
        return false;
    }
    // As libzmq: the vouch must name the short-term key this connection uses.
    if (std::memcmp(vouch.data(), client_short_.data(), 32) != 0) {
        fail(wire_error::key_exchange);
        return false;
    }
    return true;
}

void curve_server::on_zap_missing() {
    if (zap_.enforce_domain)
        return fail(wire_error::no_zap_handler);
    send_ready();
}

// ready = %d5 "READY" nonce(8) Box[props](S'->C')
void curve_server::send_ready() {
    const auto props = our_properties();
    std::vector<std::uint8_t> body(6 + 8 + curve_box::mac_size + props.size());
    std::memcpy(body.data(), "\x05READY", 6);
    const std::uint64_t n = next_nonce_++;
    curve_box::store_u64(body.data() + 6, n);
    curve_box::seal_shared(std::span(body).subspan(14), props,
                           curve_box::short_nonce("CurveZMQREADY---", n), shared_);
    send_command(body);
    codec_ = std::make_unique<curve_message_codec>(shared_, true, next_nonce_, peer_nonce_);
    curve_box::wipe(short_secret_);
    state_ = state::ready;
    finish();
}

}  // namespace zlink::wire
