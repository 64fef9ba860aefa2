// The only door to libsodium: the handful of NaCl primitives CurveZMQ (RFC 26)
// is built from, with spans instead of raw pointers. Nothing here is written by
// hand: boxes are crypto_box (Curve25519, XSalsa20, Poly1305), cookies are
// crypto_secretbox, randomness is randombytes.
//
// Every box here is in libsodium's "easy" layout, MAC first then ciphertext,
// which is exactly what RFC 26 puts on the wire (NaCl's box without its 16
// leading zero octets). Functions return false when a box does not open or
// a size is wrong; nothing throws.
#pragma once

#include "wire/mechanism.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace zlink::wire::curve_box {

inline constexpr std::size_t mac_size = 16;
inline constexpr std::size_t nonce_size = 24;
using nonce = std::array<std::uint8_t, nonce_size>;

// Initialises libsodium once per process (thread-safe). False if it cannot.
bool ready() noexcept;

void random_bytes(std::span<std::uint8_t> out) noexcept;
// A fresh Curve25519 key pair.
void keypair(curve_key &public_key, curve_key &secret_key) noexcept;
// The public key of a secret key (crypto_scalarmult_base).
bool public_of(const curve_key &secret_key, curve_key &public_key) noexcept;
// Overwrites with zeros in a way the compiler cannot drop (sodium_memzero).
void wipe(std::span<std::uint8_t> bytes) noexcept;
template <std::size_t N>
void wipe(std::array<std::uint8_t, N> &a) noexcept {
    wipe(std::span<std::uint8_t>(a));
}

// Short nonces travel as 8 octets in network order.
inline void store_u64(std::uint8_t *p, std::uint64_t v) noexcept {
    for (int i = 0; i < 8; ++i)
        p[i] = static_cast<std::uint8_t>(v >> (56 - 8 * i));
}
inline std::uint64_t load_u64(const std::uint8_t *p) noexcept {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
        v = (v << 8) | p[i];
    return v;
}

// prefix (16 octets, e.g. "CurveZMQHELLO---") + 8-octet big-endian counter.
nonce short_nonce(std::string_view prefix16, std::uint64_t counter) noexcept;
// prefix (8 octets, e.g. "WELCOME-") + 16 octets taken from `tail`.
nonce long_nonce(std::string_view prefix8, std::span<const std::uint8_t> tail16) noexcept;

// crypto_box_easy: out.size() must be in.size() + mac_size.
bool seal(std::span<std::uint8_t> out, std::span<const std::uint8_t> in, const nonce &n,
          const curve_key &their_public, const curve_key &our_secret) noexcept;
// crypto_box_open_easy: out.size() must be in.size() - mac_size.
bool open(std::span<std::uint8_t> out, std::span<const std::uint8_t> in, const nonce &n,
          const curve_key &their_public, const curve_key &our_secret) noexcept;

// The shared key of a key pair (crypto_box_beforenm), for the *_shared calls.
bool precompute(curve_key &shared, const curve_key &their_public,
                const curve_key &our_secret) noexcept;
bool seal_shared(std::span<std::uint8_t> out, std::span<const std::uint8_t> in, const nonce &n,
                 const curve_key &shared) noexcept;
bool open_shared(std::span<std::uint8_t> out, std::span<const std::uint8_t> in, const nonce &n,
                 const curve_key &shared) noexcept;
// In place: `text` is encrypted (or decrypted) where it lies; the MAC goes to
// (comes from) `mac`.
bool seal_shared_in_place(std::span<std::uint8_t> text, std::span<std::uint8_t, mac_size> mac,
                          const nonce &n, const curve_key &shared) noexcept;
// crypto_box_open_detached_afternm with the plaintext written over `text`
// (libsodium decrypts in place when input and output are the same bytes).
bool open_shared_in_place(std::span<std::uint8_t> text, std::span<const std::uint8_t, mac_size> mac,
                          const nonce &n, const curve_key &shared) noexcept;

// crypto_secretbox_easy / _open_easy with a symmetric key (the cookie).
bool seal_secret(std::span<std::uint8_t> out, std::span<const std::uint8_t> in, const nonce &n,
                 const curve_key &key) noexcept;
bool open_secret(std::span<std::uint8_t> out, std::span<const std::uint8_t> in, const nonce &n,
                 const curve_key &key) noexcept;

}  // namespace zlink::wire::curve_box
