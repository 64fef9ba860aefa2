// The body of every message the driver sends: who sent it (epoch = the sender
// process's incarnation), its sequence number, when it was sent, and a checksum,
// followed by filler bytes derived from (epoch, seq). A receiver re-derives the whole
// body, so any changed, missing or extra byte is caught, not only a changed header.
//
// Layout (little-endian): magic u32 | epoch u32 | seq u64 | sent_ns i64 |
// length u32 | reserved u32 | checksum u64 | filler.
#pragma once

#include <cstddef>
#include <cstdint>

namespace faults {

constexpr std::size_t header_size = 40;
constexpr std::uint32_t magic = 0x31544c46;  // "FLT1"

// The length of message `seq`: min when min == max, else spread over [min, max] by
// a hash of seq (so a soak mixes sizes, reproducibly).
std::size_t size_for(std::uint64_t seq, std::size_t min, std::size_t max);

void fill(std::uint8_t *buf, std::size_t n, std::uint32_t epoch, std::uint64_t seq,
          std::int64_t sent_ns);

struct Check {
    bool ok = false;  // magic, length, checksum and every filler byte as derived
    std::uint32_t epoch = 0;
    std::uint64_t seq = 0;
    std::int64_t sent_ns = 0;
};

// What the header says (even when ok is false: then it may be garbage).
Check verify(const std::uint8_t *buf, std::size_t n);

}  // namespace faults
