#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "json_writer.hpp"

namespace bench {

double percentile_sorted(const std::vector<double> &sorted, double q) {
    if (sorted.empty())
        return 0.0;
    auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    rank = std::clamp<std::size_t>(rank, 1, sorted.size());
    return sorted[rank - 1];
}

LatencySummary summarize(std::vector<double> &samples) {
    LatencySummary s;
    if (samples.empty())
        return s;
    std::sort(samples.begin(), samples.end());
    s.count = samples.size();
    s.min = samples.front();
    s.max = samples.back();
    s.p50 = percentile_sorted(samples, 0.50);
    s.p90 = percentile_sorted(samples, 0.90);
    s.p99 = percentile_sorted(samples, 0.99);
    s.p999 = percentile_sorted(samples, 0.999);
    s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(s.count);
    return s;
}

void write_latency_fields(JsonWriter &w, const LatencySummary &s) {
    w.value("count", static_cast<std::uint64_t>(s.count))
        .value("min", s.min)
        .value("p50", s.p50)
        .value("p90", s.p90)
        .value("p99", s.p99)
        .value("p999", s.p999)
        .value("max", s.max)
        .value("mean", s.mean);
}

}  // namespace bench
