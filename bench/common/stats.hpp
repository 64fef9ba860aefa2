// Latency summaries: nearest-rank percentiles over every sample (no binning).
#pragma once

#include <vector>

namespace bench {

class JsonWriter;

struct LatencySummary {
    std::size_t count = 0;
    double min = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, mean = 0;
};

// Sorts `samples` in place.
LatencySummary summarize(std::vector<double> &samples);

// Nearest-rank percentile of sorted samples, q in (0, 1].
double percentile_sorted(const std::vector<double> &sorted, double q);

// Writes count/min/p50/p90/p99/p999/max/mean as fields of the open object.
void write_latency_fields(JsonWriter &w, const LatencySummary &s);

}  // namespace bench
