#include "payload.hpp"

#include <cstring>

namespace bench {

namespace {

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

std::uint8_t pattern_byte(std::uint64_t seq, std::size_t index) {
    // Mixes both inputs so that neighbouring messages and neighbouring bytes differ.
    std::uint64_t x = (seq + 1) * 0x9E3779B97F4A7C15ULL + index * 0xBF58476D1CE4E5B9ULL;
    return static_cast<std::uint8_t>(x >> 56);
}

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
        for (std::size_t i = 0; i < size_; ++i)
            p[i] = pattern_byte(seq, i);
        return;
    }
    put_seq(p, seq);
    if (is_sampled(seq))
        for (std::size_t i = 8; i + 1 < size_; ++i)
            p[i] = pattern_byte(seq, i);
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
        for (std::size_t i = 0; i < size_; ++i)
            if (data[i] != pattern_byte(expected_seq, i)) {
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
    if (is_sampled(seq))
        for (std::size_t i = 8; i + 1 < size_; ++i)
            if (data[i] != pattern_byte(seq, i)) {
                error_ = "message " + std::to_string(seq) + ": body byte " + std::to_string(i) +
                         " corrupt";
                return false;
            }
    return true;
}

}  // namespace bench
