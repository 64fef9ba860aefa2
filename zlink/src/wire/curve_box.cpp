// libsodium calls behind curve_box.hpp (size checks, then one library call each).
#include "wire/curve_box.hpp"

#include <sodium.h>

#include <cstring>

static_assert(crypto_box_PUBLICKEYBYTES == zlink::wire::curve_key_size);
static_assert(crypto_box_SECRETKEYBYTES == zlink::wire::curve_key_size);
static_assert(crypto_box_BEFORENMBYTES == zlink::wire::curve_key_size);
static_assert(crypto_secretbox_KEYBYTES == zlink::wire::curve_key_size);
static_assert(crypto_box_MACBYTES == zlink::wire::curve_box::mac_size);
static_assert(crypto_secretbox_MACBYTES == zlink::wire::curve_box::mac_size);
static_assert(crypto_box_NONCEBYTES == zlink::wire::curve_box::nonce_size);
static_assert(crypto_secretbox_NONCEBYTES == zlink::wire::curve_box::nonce_size);

namespace zlink::wire::curve_box {

bool ready() noexcept {
    static const bool ok = sodium_init() >= 0;
    return ok;
}

void random_bytes(std::span<std::uint8_t> out) noexcept { randombytes_buf(out.data(), out.size()); }

void keypair(curve_key &public_key, curve_key &secret_key) noexcept {
    crypto_box_keypair(public_key.data(), secret_key.data());
}

bool public_of(const curve_key &secret_key, curve_key &public_key) noexcept {
    return crypto_scalarmult_base(public_key.data(), secret_key.data()) == 0;
}

void wipe(std::span<std::uint8_t> bytes) noexcept { sodium_memzero(bytes.data(), bytes.size()); }

nonce short_nonce(std::string_view prefix16, std::uint64_t counter) noexcept {
    nonce n{};
    std::memcpy(n.data(), prefix16.data(), 16);
    store_u64(n.data() + 16, counter);
    return n;
}

nonce long_nonce(std::string_view prefix8, std::span<const std::uint8_t> tail16) noexcept {
    nonce n{};
    std::memcpy(n.data(), prefix8.data(), 8);
    std::memcpy(n.data() + 8, tail16.data(), 16);
    return n;
}

bool seal(std::span<std::uint8_t> out, std::span<const std::uint8_t> in, const nonce &n,
          const curve_key &their_public, const curve_key &our_secret) noexcept {
    return out.size() == in.size() + mac_size &&
           crypto_box_easy(out.data(), in.data(), in.size(), n.data(), their_public.data(),
                           our_secret.data()) == 0;
}

bool open(std::span<std::uint8_t> out, std::span<const std::uint8_t> in, const nonce &n,
          const curve_key &their_public, const curve_key &our_secret) noexcept {
    return in.size() >= mac_size && out.size() == in.size() - mac_size &&
           crypto_box_open_easy(out.data(), in.data(), in.size(), n.data(), their_public.data(),
                                our_secret.data()) == 0;
}

bool precompute(curve_key &shared, const curve_key &their_public,
                const curve_key &our_secret) noexcept {
    return crypto_box_beforenm(shared.data(), their_public.data(), our_secret.data()) == 0;
}

bool seal_shared(std::span<std::uint8_t> out, std::span<const std::uint8_t> in, const nonce &n,
                 const curve_key &shared) noexcept {
    return out.size() == in.size() + mac_size &&
           crypto_box_easy_afternm(out.data(), in.data(), in.size(), n.data(), shared.data()) == 0;
}

bool open_shared(std::span<std::uint8_t> out, std::span<const std::uint8_t> in, const nonce &n,
                 const curve_key &shared) noexcept {
    return in.size() >= mac_size && out.size() == in.size() - mac_size &&
           crypto_box_open_easy_afternm(out.data(), in.data(), in.size(), n.data(),
                                        shared.data()) == 0;
}

bool seal_shared_in_place(std::span<std::uint8_t> text, std::span<std::uint8_t, mac_size> mac,
                          const nonce &n, const curve_key &shared) noexcept {
    return crypto_box_detached_afternm(text.data(), mac.data(), text.data(), text.size(), n.data(),
                                       shared.data()) == 0;
}

bool open_shared_in_place(std::span<std::uint8_t> text, std::span<const std::uint8_t, mac_size> mac,
                          const nonce &n, const curve_key &shared) noexcept {
    return crypto_box_open_detached_afternm(text.data(), text.data(), mac.data(), text.size(),
                                            n.data(), shared.data()) == 0;
}

bool seal_secret(std::span<std::uint8_t> out, std::span<const std::uint8_t> in, const nonce &n,
                 const curve_key &key) noexcept {
    return out.size() == in.size() + mac_size &&
           crypto_secretbox_easy(out.data(), in.data(), in.size(), n.data(), key.data()) == 0;
}

bool open_secret(std::span<std::uint8_t> out, std::span<const std::uint8_t> in, const nonce &n,
                 const curve_key &key) noexcept {
    return in.size() >= mac_size && out.size() == in.size() - mac_size &&
           crypto_secretbox_open_easy(out.data(), in.data(), in.size(), n.data(), key.data()) == 0;
}

}  // namespace zlink::wire::curve_box
