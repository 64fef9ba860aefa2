// The flags bench_arms_<pattern> takes beside the common ones (the contract:
// docs/design/2026-12-02-arms.md): the libraries to load, the arms, and how the run
// is cut into rounds and slices.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../common/options.hpp"

namespace bench::arms {

// --lib LABEL=PATH: a shared object loaded into a link-map namespace of its own.
struct LibSpec {
    std::string label, path;
};

// --arm LABEL=LIB[:VAR=VALUE,...]: a library label and the environment set while
// the arm's contexts are created.
struct ArmSpec {
    std::string label, lib;
    std::vector<std::pair<std::string, std::string>> env;
    std::size_t lib_index = 0;  // into ArmsOptions::libs
};

// automatic: perf_event_open (software events, syscall tracepoints, hardware where
// it counts), else getrusage; software: perf_event_open's software events only (no
// tracepoints: they slow every syscall down); rusage: getrusage only (hosts without
// perf events, and the tests of that path); off: nothing counted.
enum class CountersMode { automatic, software, rusage, off };

struct ArmsOptions {
    std::vector<LibSpec> libs;
    std::vector<ArmSpec> arms;
    std::uint64_t rounds = 20;        // measured rounds per kind (thr, lat)
    std::uint64_t warmup_rounds = 1;  // rounds before them, run and reported as warm-up
    std::uint64_t slice_count = 0;    // messages per throughput slice (0: by size)
    std::uint64_t slice_warmup = 0;   // uncounted messages at the start of each slice
    std::uint64_t slice_lat_count = 0;
    std::uint64_t slice_lat_warmup = 0;
    std::uint64_t seed = 0;
    bool seed_given = false;
    // software: perf's software events are free to count beside the timing; the
    // syscall tracepoints of `automatic` are not (bench/measurements/README.md).
    CountersMode counters = CountersMode::software;
    // Re-deal unpinned threads to random CPUs at every round's start (arms/dealer.hpp).
    bool redeal = false;
};

// The flags' usage text and parser; `finish` fills the defaults by size and checks
// the arms against the libraries (exit 2 through the common usage path).
ExtraFlags arms_flags(ArmsOptions &ao);

// Defaults sized so that a slice lasts about the target slice time on a 2-core
// loopback host (bench/README.md, "The arms bench": the slice-length study).
std::uint64_t default_slice_count(std::size_t size);
std::uint64_t default_slice_lat_count(std::size_t size);

const char *to_string(CountersMode m);

}  // namespace bench::arms
