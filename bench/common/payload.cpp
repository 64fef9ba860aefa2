#include "payload.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace bench {

namespace {

std::uint64_t to_little_endian(std::uint64_t w) {
    if constexpr (std::endian::native == std::endian::big)
        return __builtin_bswap64(w);
    return w;
}

void put_seq(std::uint8_t *p, std::uint64_t seq) {
    for (int i = 0; i < 8; ++i)
        p[i] = static_cast<std::uint8_t>(seq >> (8 * i));
}

std::uint64_t get_seq(const std::uint8_t *p) {
    std::uint64_t seq = 0;
    for (int i = 0; i < 8; ++i)
        seq |= static_cast<std::uint64_t>(p[i]) << (8 * i);
    return seq;
}

std::uint8_t tail_tag(std::uint64_t seq) {
    return static_cast<std::uint8_t>((seq * 0x9E3779B97F4A7C15ULL) >> 56) ^ 0xA5;
}

}  // namespace

// The pattern is made of 64-bit words: word j of message seq mixes both inputs, so
// neighbouring messages and neighbouring words differ, and byte i is byte i % 8 of
// word i / 8 (little-endian order).  Words, not bytes: a sampled 256 KiB body was
// made and checked a byte at a time (~170 us a message on a 2-core Xeon VM, 2.7 us
// per message over the sample period, about 8% of a one-core ipc message's time),
// harness work the host-ceiling pump does not do.  Words are filled and compared
// at memory speed.
constexpr std::uint64_t word_step = 0xBF58476D1CE4E5B9ULL;

std::uint64_t pattern_word(std::uint64_t seq, std::size_t word) {
    return (seq + 1) * 0x9E3779B97F4A7C15ULL + word * word_step;
}

std::uint8_t pattern_byte(std::uint64_t seq, std::size_t index) {
    return static_cast<std::uint8_t>(pattern_word(seq, index / 8) >> (8 * (index % 8)));
}

namespace {

// Bytes [from, to) of message seq's pattern into p[from, to).
void fill_pattern(std::uint8_t *p, std::uint64_t seq, std::size_t from, std::size_t to) {
    std::size_t i = from;
    for (; i < to && i % 8 != 0; ++i)
        p[i] = pattern_byte(seq, i);
    // pattern_word steps by a constant from one word to the next.
    for (std::uint64_t w = pattern_word(seq, i / 8); i + 8 <= to; i += 8, w += word_step) {
        const std::uint64_t le = to_little_endian(w);
        std::memcpy(p + i, &le, 8);
    }
    for (; i < to; ++i)
        p[i] = pattern_byte(seq, i);
}

// The first index in [from, to) where p differs from message seq's pattern, or `to`.
// Whole words are compared in blocks without an early exit (so the compiler can keep
// the loop simple); a block that differs is then searched byte by byte.
std::size_t first_mismatch(const std::uint8_t *p, std::uint64_t seq, std::size_t from,
                           std::size_t to) {
    std::size_t i = from;
    for (; i < to && i % 8 != 0; ++i)
        if (p[i] != pattern_byte(seq, i))
            return i;
    constexpr std::size_t block = 512;  // bytes
    while (i + 8 <= to) {
        const std::size_t end = std::min(to - (to - i) % 8, i + block);
        std::uint64_t diff = 0, want = pattern_word(seq, i / 8);
        for (std::size_t k = i; k < end; k += 8, want += word_step) {
            std::uint64_t got;
            std::memcpy(&got, p + k, 8);
            diff |= got ^ to_little_endian(want);
        }
        if (diff != 0)
            for (std::size_t k = i; k < end; ++k)
                if (p[k] != pattern_byte(seq, k))
                    return k;
        i = end;
    }
    for (; i < to; ++i)
        if (p[i] != pattern_byte(seq, i))
            return i;
    return to;
}

}  // namespace

bool is_sampled(std::uint64_t seq) { return seq % kSamplePeriod == 0; }

PayloadMaker::PayloadMaker(std::size_t size) : size_(size), buf_(size == 0 ? 1 : size, 0) {}

const std::uint8_t *PayloadMaker::make(std::uint64_t seq) {
    make_into(buf_.data(), seq);
    return buf_.data();
}

void PayloadMaker::make_into(std::uint8_t *p, std::uint64_t seq) const {
    if (size_ == 0)
        return;
    if (size_ < 8) {
        fill_pattern(p, seq, 0, size_);
        return;
    }
    put_seq(p, seq);
    if (is_sampled(seq) && size_ > 9)
        fill_pattern(p, seq, 8, size_ - 1);
    if (size_ >= 9)
        p[size_ - 1] = tail_tag(seq);
}

void PayloadMaker::make_corrupt_into(std::uint8_t *p, std::uint64_t seq) const {
    make_into(p, seq);
    if (size_ > 0)
        p[size_ / 2] ^= 0x40;
}

const std::uint8_t *PayloadMaker::make_corrupt(std::uint64_t seq) {
    make_corrupt_into(buf_.data(), seq);
    return buf_.data();
}

const char *Verifier::method() const {
    if (size_ == 0)
        return "count";
    if (size_ < 8)
        return "count+pattern";
    return "sequence+sampled-body";
}

bool Verifier::check_from(const std::uint8_t *data, std::size_t len, std::uint64_t min_seq,
                          std::uint64_t &seq) {
    if (len != size_ || size_ < 8)
        return check(data, len, min_seq);
    seq = get_seq(data);
    if (seq < min_seq) {
        error_ = "sequence number " + std::to_string(seq) + " arrived after " +
                 std::to_string(min_seq - 1) + " (duplicate or reordered)";
        return false;
    }
    return check(data, len, seq);
}

bool Verifier::check(const std::uint8_t *data, std::size_t len, std::uint64_t expected_seq) {
    if (len != size_) {
        error_ = "message " + std::to_string(expected_seq) + " has " + std::to_string(len) +
                 " bytes, expected " + std::to_string(size_);
        return false;
    }
    if (size_ == 0)
        return true;
    if (size_ < 8) {
        if (const std::size_t i = first_mismatch(data, expected_seq, 0, size_); i != size_) {
            error_ = "message " + std::to_string(expected_seq) + ": byte " + std::to_string(i) +
                     " does not match its pattern (lost, reordered or corrupt)";
            return false;
        }
        return true;
    }
    const std::uint64_t seq = get_seq(data);
    if (seq != expected_seq) {
        error_ = "expected sequence number " + std::to_string(expected_seq) + ", got " +
                 std::to_string(seq) +
                 (seq > expected_seq ? " (message lost)" : " (duplicate or reordered)");
        return false;
    }
    if (size_ >= 9 && data[size_ - 1] != tail_tag(seq)) {
        error_ = "message " + std::to_string(seq) + ": last byte corrupt";
        return false;
    }
    if (is_sampled(seq) && size_ > 9)
        if (const std::size_t i = first_mismatch(data, seq, 8, size_ - 1); i != size_ - 1) {
            error_ =
                "message " + std::to_string(seq) + ": body byte " + std::to_string(i) + " corrupt";
            return false;
        }
    return true;
}

}  // namespace bench
