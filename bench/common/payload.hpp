// What every benchmark message carries, and how the receiver checks it.
//
// size >= 8: bytes 0..7 = sequence number (little endian); the last byte (size >= 9)
//            is a tag derived from the sequence number; every kSamplePeriod-th
//            sequence number also gets its whole body filled with a pattern derived
//            from the sequence number (64-bit words, payload.cpp), which the receiver
//            compares in full.
//            Writing the whole body for every message would make the harness, not
//            the library, the bottleneck at large sizes; sampling keeps the check
//            cheap while still catching corruption that is not a one-off.
// size 1..7: every byte is the pattern of the sequence number (checked in full).
// size 0:    nothing to check but the count.
//
// Sender and receiver agree on everything from the sequence number alone, so a
// dropped, duplicated, reordered or corrupted message fails verification.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bench {

inline constexpr std::uint64_t kSamplePeriod = 64;

// Test-only faults; they live in the shared harness so that they behave identically
// for every library. skip/corrupt/stall: the sender in the throughput phase;
// hang: the harness itself stops making progress at shutdown (the watchdog must end it).
enum class Fault { none, skip, corrupt, stall, hang, late_tail };

std::uint64_t pattern_word(std::uint64_t seq, std::size_t word);
std::uint8_t pattern_byte(std::uint64_t seq, std::size_t index);
bool is_sampled(std::uint64_t seq);

// Builds messages in one reusable buffer.
class PayloadMaker {
public:
    explicit PayloadMaker(std::size_t size);
    // Returns the buffer holding message `seq` (valid until the next call).
    const std::uint8_t *make(std::uint64_t seq);
    // Writes message `seq` into `dst` (size() bytes) as make() writes its own buffer:
    // the bytes a receiver checks for `seq`; the rest of a body that is not sampled is
    // left as it was (the receiver does not look at it).
    void make_into(std::uint8_t *dst, std::uint64_t seq) const;
    // make_into, then one byte flipped (the corrupt fault).
    void make_corrupt_into(std::uint8_t *dst, std::uint64_t seq) const;
    // Same, then flips one byte so that the receiver must notice.
    const std::uint8_t *make_corrupt(std::uint64_t seq);
    std::size_t size() const { return size_; }

private:
    std::size_t size_;
    std::vector<std::uint8_t> buf_;
};

// Checks messages in order. On failure, error() says what was wrong.
class Verifier {
public:
    explicit Verifier(std::size_t size) : size_(size) {}
    bool check(const std::uint8_t *data, std::size_t len, std::uint64_t expected_seq);
    // For a peer that may drop (PUB at a finite HWM): any sequence number >= min_seq
    // (sizes >= 8 only), stored in `seq`; contents checked as by check().
    bool check_from(const std::uint8_t *data, std::size_t len, std::uint64_t min_seq,
                    std::uint64_t &seq);
    const std::string &error() const { return error_; }
    const char *method() const;

private:
    std::size_t size_;
    std::string error_;
};

}  // namespace bench
