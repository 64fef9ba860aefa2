// ZMTP 3.x greeting build and incremental parse.
#include "wire/greeting.hpp"

#include <algorithm>
#include <cstring>

namespace zlink::wire {

namespace {

constexpr std::size_t major_pos = 10;
constexpr std::size_t mechanism_pos = 12;
constexpr std::size_t as_server_pos = 32;

constexpr bool is_mechanism_char(std::uint8_t c) noexcept {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
           c == '+' || c == 0;
}

}  // namespace

std::array<std::uint8_t, greeting_size> make_greeting(std::string_view mechanism, bool as_server,
                                                      std::uint8_t minor,
                                                      std::size_t routing_id_size) noexcept {
    std::array<std::uint8_t, greeting_size> g{};
    g[0] = 0xFF;
    std::uint64_t legacy_length = routing_id_size + 1;  // big-endian in octets 1-8
    for (std::size_t i = signature_size - 2; i >= 1; --i, legacy_length >>= 8)
        g[i] = static_cast<std::uint8_t>(legacy_length & 0xFF);
    g[signature_size - 1] = 0x7F;
    g[major_pos] = our_major;
    g[major_pos + 1] = minor;
    const std::size_t n = std::min(mechanism.size(), mechanism_size);
    std::memcpy(g.data() + mechanism_pos, mechanism.data(), n);
    g[as_server_pos] = as_server ? 1 : 0;
    return g;
}

greeting_parser::greeting_parser(std::string_view expected_mechanism) noexcept
    : expected_(expected_mechanism) {}

std::string_view greeting_parser::peer_mechanism() const noexcept {
    const auto *p = reinterpret_cast<const char *>(bytes_.data() + mechanism_pos);
    std::size_t n = 0;
    while (n < mechanism_size && p[n] != 0)
        ++n;
    return {p, n};
}

// Validates the octet just stored at `pos`. Octets are checked as they arrive so a
// non-ZMTP peer is refused after its first octet, not after 64.
wire_error greeting_parser::check_octet(std::size_t pos) const noexcept {
    const std::uint8_t c = bytes_[pos];
    if (pos == 0 && c != 0xFF)
        return wire_error::bad_signature;
    // ZMTP 1.0 peers send a long length here whose last octet has bit 0 clear.
    if (pos == signature_size - 1 && (c & 1) == 0)
        return wire_error::bad_signature;
    if (pos == major_pos && c < 3)
        return wire_error::unsupported_version;
    if (pos >= mechanism_pos && pos < mechanism_pos + mechanism_size && !is_mechanism_char(c))
        return wire_error::malformed_mechanism;
    if (pos == mechanism_pos + mechanism_size - 1) {
        // Compare the whole null-padded field: "NULL" must not match "NULLX".
        std::array<std::uint8_t, mechanism_size> want{};
        std::memcpy(want.data(), expected_.data(), std::min(expected_.size(), mechanism_size));
        if (std::memcmp(want.data(), bytes_.data() + mechanism_pos, mechanism_size) != 0)
            return wire_error::mechanism_mismatch;
    }
    // Padding (1-8), as-server and filler are not validated: the RFC forbids
    // interpreting padding, and libzmq does not check the filler either.
    return wire_error::none;
}

std::size_t greeting_parser::feed(std::span<const std::uint8_t> in) noexcept {
    std::size_t used = 0;
    while (used < in.size() && bytes_needed() > 0) {
        bytes_[received_] = in[used++];
        error_ = check_octet(received_);
        ++received_;
    }
    return used;
}

}  // namespace zlink::wire
