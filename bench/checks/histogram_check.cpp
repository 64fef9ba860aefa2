// histogram_check: the latency histogram (common/histogram.*) on values it is given, for
// the tests in analysis/tests/test_bench_histogram.py. Not a benchmark: no library.
//
//   histogram_check PIECES < values      (one non-negative integer per line)
//
// Records value i into piece i % PIECES and every value into one whole histogram,
// merges the pieces, and prints one JSON line: the whole and the merged histogram and
// each piece (encoded as the bench writes them), the whole's percentiles, and whether
// decode(encode()) gives the same histogram back. Exit 2 on bad input.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "../common/histogram.hpp"
#include "../common/json_writer.hpp"

using bench::JsonWriter;
using bench::LatencyHistogram;

namespace {

[[noreturn]] void usage(const char *why) {
    std::fprintf(stderr, "histogram_check: %s\nusage: histogram_check PIECES < values\n", why);
    std::exit(2);
}

void write_encoded(JsonWriter &w, const LatencyHistogram &h) {
    w.begin_array();
    for (const std::int64_t n : h.encode())
        w.value("", n);
    w.end_array();
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 2)
        usage("one argument expected");
    const long pieces = std::strtol(argv[1], nullptr, 10);
    if (pieces < 1 || pieces > 1000)
        usage("PIECES must be 1..1000");
    std::vector<LatencyHistogram> parts(static_cast<std::size_t>(pieces));
    LatencyHistogram whole;
    std::string line;
    for (std::uint64_t i = 0; std::getline(std::cin, line); ++i) {
        char *end = nullptr;
        const unsigned long long v = std::strtoull(line.c_str(), &end, 10);
        if (line.empty() || line[0] == '-' || *end != '\0')
            usage("each line must be a non-negative integer");
        parts[i % parts.size()].record(v);
        whole.record(v);
    }
    LatencyHistogram merged;
    for (const auto &p : parts)
        merged.merge(p);
    LatencyHistogram again;
    const bool decoded = again.decode(whole.encode()) && again.encode() == whole.encode();

    JsonWriter w;
    w.begin_object();
    bench::write_histogram(w, "whole", whole, "ns", "given");
    bench::write_histogram(w, "merged", merged, "ns", "given");
    w.begin_array("pieces");
    for (const auto &p : parts)
        write_encoded(w, p);
    w.end_array();
    w.begin_object("percentiles");
    for (const auto &[name, q] :
         {std::pair{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"p999", 0.999}})
        w.value(name, whole.percentile(q));
    w.end_object();
    w.value("decode_round_trip", decoded);
    w.end_object();
    std::printf("%s\n", w.str().c_str());
    return 0;
}
