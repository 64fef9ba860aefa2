// Z85 (ZeroMQ RFC 32): binary <-> printable text, 4 octets to 5 characters.
//
// Used by zmq_z85_encode/decode and by CURVE (keys given as 40-character
// strings).  Like the rest of the codec it never throws and never allocates:
// the caller owns both buffers and the functions only report whether the
// input was valid.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zlink::wire {

// Encoded length of `size` octets (size must be a multiple of 4).
constexpr std::size_t z85_encoded_size(std::size_t size) { return size / 4 * 5; }
// Decoded length of `chars` characters (chars must be a multiple of 5).
constexpr std::size_t z85_decoded_size(std::size_t chars) { return chars / 5 * 4; }

// Writes z85_encoded_size(size) characters and a terminating NUL to dest.
// false (nothing written) when size is not a multiple of 4.
bool z85_encode(char *dest, const std::uint8_t *data, std::size_t size);

// Decodes `chars` characters of text into z85_decoded_size(chars) octets.
// false when chars is not a positive multiple of 5, a character is outside
// the Z85 alphabet, or a group of 5 stands for a value above 2^32 - 1.  dest
// may have been partly written when false is returned.
bool z85_decode(std::uint8_t *dest, const char *text, std::size_t chars);

}  // namespace zlink::wire
