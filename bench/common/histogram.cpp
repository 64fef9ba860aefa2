#include "histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "json_writer.hpp"

namespace bench {

std::size_t LatencyHistogram::index_of(std::uint64_t value) {
    value = std::min<std::uint64_t>(value, (std::uint64_t{1} << kMaxBits) - 1);
    if (value < kLinear)
        return static_cast<std::size_t>(value);
    // shift >= 1; value >> shift lies in [kHalf, kLinear): the bucket within its octave.
    const int shift = std::bit_width(value) - kSubBits;
    return kLinear + static_cast<std::size_t>(shift - 1) * kHalf +
           static_cast<std::size_t>((value >> shift) - kHalf);
}

std::uint64_t LatencyHistogram::lowest(std::size_t index) {
    if (index < kLinear)
        return index;
    const std::size_t j = index - kLinear;
    const std::uint64_t sub = j % kHalf + kHalf;
    return sub << (j / kHalf + 1);
}

std::uint64_t LatencyHistogram::width(std::size_t index) {
    return index < kLinear ? 1 : std::uint64_t{1} << ((index - kLinear) / kHalf + 1);
}

double LatencyHistogram::representative(std::size_t index) {
    return static_cast<double>(lowest(index)) + static_cast<double>(width(index) - 1) / 2.0;
}

void LatencyHistogram::record(std::uint64_t value) {
    ++counts_[index_of(value)];
    ++total_;
}

void LatencyHistogram::merge(const LatencyHistogram &other) {
    for (std::size_t i = 0; i < kBuckets; ++i)
        counts_[i] += other.counts_[i];
    total_ += other.total_;
}

double LatencyHistogram::percentile(double q) const {
    if (total_ == 0)
        return 0.0;
    auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(total_)));
    rank = std::clamp<std::uint64_t>(rank, 1, total_);
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < kBuckets; ++i) {
        seen += counts_[i];
        if (seen >= rank)
            return representative(i);
    }
    return representative(kBuckets - 1);
}

std::vector<std::int64_t> LatencyHistogram::encode() const {
    std::vector<std::int64_t> out;
    std::int64_t empty = 0;
    for (std::size_t i = 0; i < kBuckets; ++i) {
        if (counts_[i] == 0) {
            ++empty;
            continue;
        }
        if (empty > 0)
            out.push_back(-empty);
        empty = 0;
        out.push_back(static_cast<std::int64_t>(counts_[i]));
    }
    return out;
}

bool LatencyHistogram::decode(const std::vector<std::int64_t> &encoded) {
    LatencyHistogram h;
    std::size_t at = 0;
    for (const std::int64_t n : encoded) {
        const std::size_t step = n < 0 ? static_cast<std::size_t>(-n) : 1;
        if (n == 0 || at + step > kBuckets)
            return false;
        if (n > 0) {
            h.counts_[at] = static_cast<std::uint64_t>(n);
            h.total_ += static_cast<std::uint64_t>(n);
        }
        at += step;
    }
    *this = h;
    return true;
}

void write_histogram(JsonWriter &w, std::string_view key, const LatencyHistogram &h,
                     std::string_view unit, std::string_view measure) {
    w.begin_object(key)
        .value("unit", unit)
        .value("measure", measure)
        .value("sub_bucket_bits", LatencyHistogram::kSubBits)
        .value("max_bits", LatencyHistogram::kMaxBits)
        .value("total", h.total());
    w.begin_array("counts");
    for (const std::int64_t n : h.encode())
        w.value("", n);
    w.end_array().end_object();
}

}  // namespace bench
