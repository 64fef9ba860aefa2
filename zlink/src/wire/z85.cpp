#include "wire/z85.hpp"

#include <array>

namespace zlink::wire {

namespace {

// RFC 32's alphabet: digit value i is alphabet[i].
constexpr char alphabet[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
static_assert(sizeof alphabet == 85 + 1);

constexpr std::uint8_t not_a_digit = 0xff;

// The inverse table, derived from the alphabet so the two cannot disagree.
constexpr std::array<std::uint8_t, 256> make_digit_values() {
    std::array<std::uint8_t, 256> values{};
    for (auto &v : values)
        v = not_a_digit;
    for (std::uint8_t i = 0; i < 85; ++i)
        values[static_cast<unsigned char>(alphabet[i])] = i;
    return values;
}
constexpr auto digit_values = make_digit_values();

}  // namespace

bool z85_encode(char *dest, const std::uint8_t *data, std::size_t size) {
    if (size % 4 != 0)
        return false;
    for (std::size_t in = 0; in < size; in += 4) {
        std::uint32_t value = std::uint32_t{data[in]} << 24 | std::uint32_t{data[in + 1]} << 16 |
                              std::uint32_t{data[in + 2]} << 8 | data[in + 3];
        // Most significant digit first.
        for (int d = 4; d >= 0; --d) {
            dest[d] = alphabet[value % 85];
            value /= 85;
        }
        dest += 5;
    }
    *dest = '\0';
    return true;
}

bool z85_decode(std::uint8_t *dest, const char *text, std::size_t chars) {
    if (chars == 0 || chars % 5 != 0)
        return false;
    for (std::size_t in = 0; in < chars; in += 5) {
        std::uint64_t value = 0;  // 85^5 - 1 fits; 2^32 overflow is checked below
        for (std::size_t k = 0; k < 5; ++k) {
            std::uint8_t digit = digit_values[static_cast<unsigned char>(text[in + k])];
            if (digit == not_a_digit)
                return false;
            value = value * 85 + digit;
        }
        if (value > 0xffffffffu)
            return false;
        for (int shift = 24; shift >= 0; shift -= 8)
            *dest++ = static_cast<std::uint8_t>(value >> shift);
    }
    return true;
}

}  // namespace zlink::wire
