#include "options.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace faults {
namespace {

[[noreturn]] void usage(const std::string &why) {
    std::fprintf(stderr,
                 "fault_driver: %s\n"
                 "usage: fault_driver --role send|recv --pattern PAIR|PUSH_PULL|DEALER_ROUTER|"
                 "PUB_SUB|REQ_REP\n"
                 "  (--bind EP | --connect EP) --security null|curve --log PATH --events PATH\n"
                 "  --start-at NS --send-until NS --until NS (CLOCK_MONOTONIC)\n"
                 "  [--epoch N] [--size MIN[:MAX]] [--rate PER_S] [--linger MS] [--poll-ms MS]\n"
                 "  [--heartbeat IVL:TIMEOUT:TTL] [--request-timeout MS] [--retries N]\n"
                 "  [--sample-ms MS] [--seed-rand N]\n",
                 why.c_str());
    std::exit(2);
}

long long number(const char *flag, const char *text) {
    char *end = nullptr;
    const long long v = std::strtoll(text, &end, 10);
    if (!*text || *end)
        usage(std::string(flag) + ": not an integer: " + text);
    return v;
}

Pattern pattern_of(const std::string &s) {
    if (s == "PAIR")
        return Pattern::pair;
    if (s == "PUSH_PULL")
        return Pattern::push_pull;
    if (s == "DEALER_ROUTER")
        return Pattern::dealer_router;
    if (s == "PUB_SUB")
        return Pattern::pub_sub;
    if (s == "REQ_REP")
        return Pattern::req_rep;
    usage("--pattern: unknown " + s);
}

void sizes(Options &o, const std::string &s) {
    const auto colon = s.find(':');
    o.size_min = std::size_t(number("--size", s.substr(0, colon).c_str()));
    o.size_max = colon == std::string::npos ? o.size_min
                                            : std::size_t(number("--size", s.c_str() + colon + 1));
    if (o.size_min < 40 || o.size_max < o.size_min)
        usage("--size: MIN >= 40 (the header) and MAX >= MIN");
}

void heartbeat(Options &o, const std::string &s) {
    int v[3];
    if (std::sscanf(s.c_str(), "%d:%d:%d", &v[0], &v[1], &v[2]) != 3 || v[0] < 1 || v[1] < 1 ||
        v[2] < 0)
        usage("--heartbeat: IVL:TIMEOUT:TTL in ms");
    o.heartbeat_ivl = v[0];
    o.heartbeat_timeout = v[1];
    o.heartbeat_ttl = v[2];
}

}  // namespace

const char *pattern_name(Pattern p) {
    switch (p) {
    case Pattern::pair: return "PAIR";
    case Pattern::push_pull: return "PUSH_PULL";
    case Pattern::dealer_router: return "DEALER_ROUTER";
    case Pattern::pub_sub: return "PUB_SUB";
    case Pattern::req_rep: return "REQ_REP";
    }
    return "?";
}

Options parse_options(int argc, char **argv) {
    Options o;
    bool have_role = false, have_pattern = false, have_security = false;
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        if (i + 1 >= argc)
            usage(flag + " needs a value");
        const char *val = argv[++i];
        if (flag == "--role") {
            if (std::strcmp(val, "send") && std::strcmp(val, "recv"))
                usage("--role: send or recv");
            o.role = std::strcmp(val, "send") == 0 ? Role::send : Role::recv;
            have_role = true;
        } else if (flag == "--pattern") {
            o.pattern = pattern_of(val);
            have_pattern = true;
        } else if (flag == "--bind" || flag == "--connect") {
            o.endpoint = val;
            o.bind = flag == "--bind";
        } else if (flag == "--security") {
            if (std::strcmp(val, "null") && std::strcmp(val, "curve"))
                usage("--security: null or curve");
            o.curve = std::strcmp(val, "curve") == 0;
            have_security = true;
        } else if (flag == "--heartbeat") {
            heartbeat(o, val);
        } else if (flag == "--linger") {
            o.linger = int(number("--linger", val));
        } else if (flag == "--poll-ms") {
            o.poll_ms = int(number("--poll-ms", val));
        } else if (flag == "--size") {
            sizes(o, val);
        } else if (flag == "--rate") {
            o.rate = std::atof(val);
        } else if (flag == "--start-at") {
            o.start_at_ns = number("--start-at", val);
        } else if (flag == "--send-until") {
            o.send_until_ns = number("--send-until", val);
        } else if (flag == "--until") {
            o.until_ns = number("--until", val);
        } else if (flag == "--epoch") {
            o.epoch = std::uint32_t(number("--epoch", val));
        } else if (flag == "--log") {
            o.log_path = val;
        } else if (flag == "--events") {
            o.events_path = val;
        } else if (flag == "--request-timeout") {
            o.request_timeout_ms = int(number("--request-timeout", val));
        } else if (flag == "--retries") {
            o.retries = int(number("--retries", val));
        } else if (flag == "--sample-ms") {
            o.sample_ms = int(number("--sample-ms", val));
        } else if (flag == "--seed-rand") {
            const long long seed = number("--seed-rand", val);
            if (seed < 0 || seed > 0xffffffffLL)
                usage("--seed-rand: 0 .. 4294967295");
            o.seed_rand = true;
            o.rand_seed = unsigned(seed);
        } else {
            usage("unknown flag " + flag);
        }
    }
    if (!have_role || !have_pattern || !have_security || o.endpoint.empty() || o.log_path.empty() ||
        o.events_path.empty())
        usage("--role, --pattern, --security, --bind/--connect, --log and --events are required");
    if (!o.start_at_ns || !o.until_ns || o.send_until_ns > o.until_ns || o.rate <= 0 ||
        o.poll_ms < 1 || o.sample_ms < 1)
        usage("--start-at, --until (>= --send-until) and a rate > 0 are required");
    return o;
}

}  // namespace faults
