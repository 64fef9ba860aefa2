// What an arms run holds: its libraries, its arms (each with its own contexts and
// sockets in this process), the counters, and the slices each side measured.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../common/end.hpp"
#include "../common/options.hpp"
#include "../common/report.hpp"
#include "../common/runner.hpp"
#include "../common/sides.hpp"
#include "arms_options.hpp"
#include "counters.hpp"
#include "dealer.hpp"
#include "namespaces.hpp"

namespace bench::arms {

enum class Kind { thr, lat };
const char *to_string(Kind k);

// One arm in this process: its library copy, its contexts (created with the arm's
// environment) and the sockets of this process's side(s).
struct ArmRuntime {
    std::size_t index = 0;
    const ArmSpec *spec = nullptr;
    const LoadedLibrary *lib = nullptr;
    std::unique_ptr<ContextPool> contexts;
    std::optional<Side> receiver, sender;
    std::optional<LibrarySettings> reports;  // read back from its first socket
    std::vector<std::string> bound;          // the receiving side's endpoints
};

// One slice as one side saw it (the fields that side knows; the rest stay empty).
struct SliceRecord {
    Kind kind = Kind::thr;
    std::uint64_t round = 0;
    bool warmup = false;
    std::size_t arm = 0;
    std::uint64_t count = 0;  // measured messages (delivered, if lossy) or round trips
    std::uint64_t warmup_messages = 0;
    std::optional<double> receiver_seconds, sender_seconds, span_seconds;
    std::optional<std::uint64_t> sent;  // lossy throughput: measured messages sent
    std::optional<LatencyResult> lat;
    std::optional<std::vector<std::uint64_t>> counters;  // deltas, in Counters::events() order
};

struct ArmsRun {
    const Options &o;
    const ArmsOptions &ao;
    const PatternSpec &spec;
    Counters &counters;
    std::vector<LoadedLibrary> libs;
    std::vector<ArmRuntime> arms;
    std::vector<SliceRecord> receiver_slices, sender_slices;
    bool valgrind = false;
    Dealer dealer;  // --redeal: configured by the runner from ArmsOptions
};

// "thr 3 0 1": the slice message of the link (kind, round, warmup, arm).
std::string slice_message(const SliceRecord &s);
bool parse_slice_message(const std::string &text, SliceRecord &out);

}  // namespace bench::arms
