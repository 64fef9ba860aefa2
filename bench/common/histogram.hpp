// A log-linear latency histogram (the idea of HdrHistogram, written here): fixed memory,
// bounded relative error, and mergeable, so the round trips of a repetition can be
// counted in pieces and added up, and the analysis can add up repetitions.
//
// Values are non-negative integers (the bench records RTT/2 in nanoseconds). Values
// below 2^kSubBits get a bucket each (exact). Above, every power-of-two range
// [2^e, 2^(e+1)) is cut into 2^(kSubBits-1) equal buckets, so a bucket is at most
// 1/2^(kSubBits-1) of its lowest value wide and its midpoint lies within half of that
// of every value in it: 1/128 = 0.78% at kSubBits = 7. Values of 2^kMaxBits and more
// (over 18 minutes in ns) are counted in the last bucket.
//
// The layout is a contract with analysis/testbed/results/latency_histogram.py, which
// decodes, merges and reads percentiles from what encode() writes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace bench {

class JsonWriter;

class LatencyHistogram {
public:
    static constexpr int kSubBits = 7;
    static constexpr int kMaxBits = 40;
    static constexpr std::size_t kLinear = std::size_t{1} << kSubBits;
    static constexpr std::size_t kHalf = kLinear / 2;
    static constexpr std::size_t kBuckets = kLinear + (kMaxBits - kSubBits) * kHalf;

    static std::size_t index_of(std::uint64_t value);
    static std::uint64_t lowest(std::size_t index);  // smallest value the bucket holds
    static std::uint64_t width(std::size_t index);   // how many integer values it holds
    // The value a bucket stands for: its midpoint (exact in the linear buckets).
    static double representative(std::size_t index);

    void record(std::uint64_t value);
    void merge(const LatencyHistogram &other);
    std::uint64_t total() const { return total_; }
    std::uint64_t count_at(std::size_t index) const { return counts_[index]; }

    // Nearest-rank percentile (q in (0, 1]), as bench::percentile_sorted over the exact
    // samples, read as the representative of the bucket holding that rank; 0 if empty.
    double percentile(double q) const;

    // Compact form for the JSON line: bucket counts from bucket 0 up to the last
    // non-empty one, where a negative number -k stands for k empty buckets.
    std::vector<std::int64_t> encode() const;
    // The inverse; false (and *this unchanged) on a malformed or too long list.
    bool decode(const std::vector<std::int64_t> &encoded);

private:
    std::array<std::uint64_t, kBuckets> counts_{};
    std::uint64_t total_ = 0;
};

// Writes `key`: {unit, measure, sub_bucket_bits, max_bits, total, counts (encoded)}.
void write_histogram(JsonWriter &w, std::string_view key, const LatencyHistogram &h,
                     std::string_view unit, std::string_view measure);

}  // namespace bench
