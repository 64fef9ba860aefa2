#include "arms_options.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <memory>
#include <random>
#include <set>

namespace bench::arms {

namespace {

constexpr const char *kUsage =
    "  arms (one process pair holds every arm; rounds of one slice per arm, random order):\n"
    "  --lib LABEL=PATH   a libzmq-API shared object, loaded into a link-map namespace of "
    "its own\n"
    "                     (repeatable; the same PATH under two labels = two copies)\n"
    "  --arm LABEL=LIB[:VAR=VALUE,...]  an arm: its --lib label, and the environment set "
    "while\n"
    "                     its contexts are created (repeatable; order = creation order)\n"
    "  --rounds N         measured rounds per kind (default 20)\n"
    "  --warmup-rounds N  rounds before them, reported as warm-up (default 1)\n"
    "  --slice-count N    messages per throughput slice (default: 10,000 under 64 KiB,\n"
    "                     else 32 MiB of payload)\n"
    "  --slice-lat-count N  round trips per latency slice (default by size)\n"
    "  --warmup N         uncounted messages at the start of each throughput slice\n"
    "                     (default slice-count/20, >= 1); --lat-warmup N likewise per latency\n"
    "                     slice (default slice-lat-count/10, >= 1)\n"
    "  --seed N           the order of the arms within each round (default: random, reported)\n"
    "  --counters M       software|auto|rusage|off: per-slice counted work (default\n"
    "                     software: perf's software events, else getrusage; auto: also\n"
    "                     syscall tracepoints and hardware events, which slow syscalls\n"
    "                     down: for counting runs, not for timing; rusage: getrusage)\n"
    "  --redeal on|off    at every round's start pin each unpinned thread to a random CPU\n"
    "                     of its own, and unpin it at its slice's warm-up barrier, so a\n"
    "                     free-placement run samples many placements (default off)\n";

bool parse_u64(std::string_view text, std::uint64_t lo, std::uint64_t hi, std::uint64_t &out) {
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return !text.empty() && ec == std::errc() && ptr == text.data() + text.size() && out >= lo &&
           out <= hi;
}

// A label names an arm or a library in the JSON and in callgrind dump labels.
bool good_label(std::string_view s) {
    return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
               c == '@';
    });
}

bool good_env_name(std::string_view s) {
    return !s.empty() && !std::isdigit(static_cast<unsigned char>(s[0])) &&
           std::all_of(s.begin(), s.end(), [](char c) {
               return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
           });
}

constexpr const char *kLabelRule = "letters, digits, '_', '-', '.', '@'; at most 64";

std::string parse_lib(std::string_view v, ArmsOptions &ao) {
    const auto eq = v.find('=');
    if (eq == std::string_view::npos || eq + 1 == v.size())
        return "--lib: '" + std::string(v) + "' is not LABEL=PATH";
    LibSpec lib{std::string(v.substr(0, eq)), std::string(v.substr(eq + 1))};
    if (!good_label(lib.label))
        return "--lib: label '" + lib.label + "' is not allowed (" + kLabelRule + ")";
    for (const auto &other : ao.libs)
        if (other.label == lib.label)
            return "--lib: label '" + lib.label + "' given twice";
    ao.libs.push_back(std::move(lib));
    return "";
}

// LABEL=LIB[:VAR=VALUE,VAR=VALUE]
std::string parse_arm(std::string_view v, ArmsOptions &ao) {
    const std::string what = "--arm '" + std::string(v) + "': ";
    const auto eq = v.find('=');
    if (eq == std::string_view::npos)
        return what + "not LABEL=LIB[:VAR=VALUE,...]";
    ArmSpec arm;
    arm.label = std::string(v.substr(0, eq));
    std::string_view rest = v.substr(eq + 1);
    const auto colon = rest.find(':');
    arm.lib = std::string(rest.substr(0, colon));
    if (!good_label(arm.label))
        return what + "label '" + arm.label + "' is not allowed (" + kLabelRule + ")";
    if (arm.lib.empty())
        return what + "no library label after '='";
    for (const auto &other : ao.arms)
        if (other.label == arm.label)
            return what + "arm label '" + arm.label + "' given twice";
    if (colon != std::string_view::npos) {
        std::string_view env = rest.substr(colon + 1);
        if (env.empty())
            return what + "nothing after ':' (give VAR=VALUE,... or no ':')";
        while (!env.empty()) {
            const auto comma = env.find(',');
            const std::string_view kv = env.substr(0, comma);
            const auto e = kv.find('=');
            const std::string name(kv.substr(0, e));
            if (e == std::string_view::npos || !good_env_name(name))
                return what + "'" + std::string(kv) +
                       "' is not VAR=VALUE (VAR: letters, digits, '_')";
            for (const auto &[n, _] : arm.env)
                if (n == name)
                    return what + "variable " + name + " given twice";
            arm.env.emplace_back(name, std::string(kv.substr(e + 1)));
            env = comma == std::string_view::npos ? std::string_view{} : env.substr(comma + 1);
        }
    }
    ao.arms.push_back(std::move(arm));
    return "";
}

struct Seen {
    bool warmup = false, lat_warmup = false;
};

std::string finish(Options &o, ArmsOptions &ao, const Seen &seen) {
    if (ao.libs.empty())
        return "give at least one --lib LABEL=PATH";
    if (ao.arms.empty())
        return "give at least one --arm LABEL=LIB[:VAR=VALUE,...]";
    for (auto &arm : ao.arms) {
        const auto it = std::find_if(ao.libs.begin(), ao.libs.end(),
                                     [&](const LibSpec &l) { return l.label == arm.lib; });
        if (it == ao.libs.end()) {
            std::string known;
            for (const auto &l : ao.libs)
                known += (known.empty() ? "" : ", ") + l.label;
            return "--arm " + arm.label + ": no --lib labelled '" + arm.lib + "' (given: " + known +
                   ")";
        }
        arm.lib_index = static_cast<std::size_t>(it - ao.libs.begin());
    }
    if (o.no_peer)
        return "--no-peer is not supported by the arms bench";
    if (ao.slice_count == 0)
        ao.slice_count = default_slice_count(o.size);
    if (ao.slice_lat_count == 0)
        ao.slice_lat_count = default_slice_lat_count(o.size);
    // The common parser filled --warmup/--lat-warmup from --count; in the arms bench
    // they are per slice.
    if (!seen.warmup)
        o.warmup = std::max<std::uint64_t>(1, ao.slice_count / 20);
    if (!seen.lat_warmup)
        o.lat_warmup = std::max<std::uint64_t>(1, ao.slice_lat_count / 10);
    if (o.warmup < 1)
        return "--warmup: a throughput slice needs at least 1 warm-up message (the barrier)";
    ao.slice_warmup = o.warmup;
    ao.slice_lat_warmup = o.lat_warmup;
    o.count = ao.slice_count;
    o.lat_count = ao.slice_lat_count;
    if (o.fault != Fault::none && o.count < 4)
        return "--inject-fault needs --slice-count >= 4";
    if (!ao.seed_given)
        ao.seed =
            std::random_device{}() ^ (static_cast<std::uint64_t>(std::random_device{}()) << 32);
    return "";
}

}  // namespace

const char *to_string(CountersMode m) {
    switch (m) {
    case CountersMode::automatic: return "auto";
    case CountersMode::software: return "software";
    case CountersMode::rusage: return "rusage";
    case CountersMode::off: break;
    }
    return "off";
}

std::uint64_t default_slice_count(std::size_t size) {
    // The slice-length study (bench/measurements/README.md, 2026-12-02): from 64 KiB
    // up a slice needs about 32 MiB of payload to leave the socket buffers behind;
    // below, 10 ms is the target, which 10,000 messages approach at 1 KiB here (a
    // sweep calibrates the count from the target instead).
    constexpr std::uint64_t kLargePayload = 32ULL << 20;
    if (size >= 65536)
        return std::max<std::uint64_t>(1, kLargePayload / size);
    return 10'000;
}

std::uint64_t default_slice_lat_count(std::size_t size) {
    if (size <= 4096)
        return 500;
    if (size <= 65536)
        return 250;
    return 100;
}

ExtraFlags arms_flags(ArmsOptions &ao) {
    auto seen = std::make_shared<Seen>();
    ExtraFlags f;
    f.usage = kUsage;
    f.take = [&ao, seen](std::string_view flag, std::string_view v, std::string &error) {
        std::uint64_t n = 0;
        auto number = [&](std::uint64_t lo, std::uint64_t hi, std::uint64_t &out) {
            if (parse_u64(v, lo, hi, n)) {
                out = n;
                return ExtraFlags::Taken;
            }
            error = std::string(flag) + ": '" + std::string(v) + "' is not an integer in " +
                    std::to_string(lo) + ".." + std::to_string(hi);
            return ExtraFlags::Refused;
        };
        if (flag == "--lib" || flag == "--arm") {
            error = flag == "--lib" ? parse_lib(v, ao) : parse_arm(v, ao);
            return error.empty() ? ExtraFlags::Taken : ExtraFlags::Refused;
        }
        if (flag == "--rounds")
            return number(1, 1'000'000, ao.rounds);
        if (flag == "--warmup-rounds")
            return number(0, 1'000'000, ao.warmup_rounds);
        if (flag == "--slice-count")
            return number(1, 1ULL << 32, ao.slice_count);
        if (flag == "--slice-lat-count")
            return number(1, 1ULL << 32, ao.slice_lat_count);
        if (flag == "--seed") {
            ao.seed_given = true;
            return number(0, ~0ULL, ao.seed);
        }
        if (flag == "--counters") {
            for (const CountersMode m : {CountersMode::automatic, CountersMode::software,
                                         CountersMode::rusage, CountersMode::off})
                if (v == to_string(m)) {
                    ao.counters = m;
                    return ExtraFlags::Taken;
                }
            error =
                "--counters: '" + std::string(v) + "' is not one of auto, software, rusage, off";
            return ExtraFlags::Refused;
        }
        if (flag == "--redeal") {
            if (v == "on" || v == "off") {
                ao.redeal = v == "on";
                return ExtraFlags::Taken;
            }
            error = "--redeal: '" + std::string(v) + "' is not one of on, off";
            return ExtraFlags::Refused;
        }
        if (flag == "--count" || flag == "--lat-count") {
            error = std::string(flag) + ": the arms bench counts per slice: use " +
                    (flag == "--count" ? "--slice-count" : "--slice-lat-count");
            return ExtraFlags::Refused;
        }
        if (flag == "--warmup")
            seen->warmup = true;
        if (flag == "--lat-warmup")
            seen->lat_warmup = true;
        return ExtraFlags::NotMine;
    };
    f.finish = [&ao, seen](Options &o) { return finish(o, ao, *seen); };
    return f;
}

}  // namespace bench::arms
