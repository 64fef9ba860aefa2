#include "core/knobs.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

#include "zlink.h"

namespace zlink {

namespace {

using range_t = knob_desc::range_t;

// The core's own knobs: the global sizes every transport falls back to.
const knob_desc global_knobs[] = {
    {ZMQ_ASIO_IN_BATCH_SIZE, "ZMQ_ASIO_IN_BATCH_SIZE", range_t::batch},
    {ZMQ_ASIO_OUT_BATCH_SIZE, "ZMQ_ASIO_OUT_BATCH_SIZE", range_t::batch},
};

// The global knob or the transport knob for an option, or nullptr.
const knob_desc *find_knob(int option) {
    for (const auto &d : global_knobs)
        if (d.option == option)
            return &d;
    for (const auto &d : transport_knobs())
        if (d.option == option)
            return &d;
    return nullptr;
}

bool is_global(const knob_desc &d) {
    return d.option == ZMQ_ASIO_IN_BATCH_SIZE || d.option == ZMQ_ASIO_OUT_BATCH_SIZE;
}

int unset_value(const knob_desc &d) { return d.range == range_t::transfer ? 0 : -1; }

bool in_range(const knob_desc &d, long long v) {
    if (d.range == range_t::transfer)
        return v == 0 || (v >= knobs_t::min_batch && v <= knobs_t::max_transfer_limit);
    return v >= knobs_t::min_batch && v <= knobs_t::max_batch;
}

// Each bad variable is reported once per process, however many contexts.
void report_once(const knob_desc &d, const char *text, int used) {
    static std::mutex m;
    static std::set<int> reported;
    std::lock_guard<std::mutex> lock(m);
    if (!reported.insert(d.option).second)
        return;
    const bool transfer = d.range == range_t::transfer;
    std::fprintf(stderr, "zlink: ignoring %s='%s' (allowed: %s integer bytes %d..%d); using %d\n",
                 d.name, text, transfer ? "0 or an" : "an", knobs_t::min_batch,
                 transfer ? knobs_t::max_transfer_limit : knobs_t::max_batch, used);
}

void read_env(knobs_t &k, const knob_desc &d) {
    const char *text = std::getenv(d.name);
    if (!text)
        return;
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(text, &end, 10);
    if (errno == 0 && end != text && *end == '\0' && in_range(d, v)) {
        k.set(d.option, static_cast<int>(v));
        return;
    }
    int used = 0;
    k.get(d.option, used);
    report_once(d, text, used);
}

int ceiling(int per_transport, bool global_set, int global) {
    if (per_transport > 0)
        return per_transport;
    return global_set ? global : std::max(global, knobs_t::adaptive_ceiling);
}

}  // namespace

knobs_t knobs_t::from_env() {
    knobs_t k;
    for (const auto &d : global_knobs)
        read_env(k, d);
    for (const auto &d : transport_knobs())
        read_env(k, d);
    return k;
}

int knobs_t::set(int option, int value) {
    const knob_desc *d = find_knob(option);
    // -1 resets a per-transport size to "use the global value".
    const bool reset = d && !is_global(*d) && d->range == range_t::batch && value == -1;
    if (!d || !(in_range(*d, value) || reset)) {
        errno = EINVAL;
        return -1;
    }
    assign(*d, value);
    return 0;
}

int knobs_t::get(int option, int &out) const {
    const knob_desc *d = find_knob(option);
    if (!d) {
        errno = EINVAL;
        return -1;
    }
    out = option == ZMQ_ASIO_IN_BATCH_SIZE    ? in_batch
          : option == ZMQ_ASIO_OUT_BATCH_SIZE ? out_batch
                                              : value(option);
    return 0;
}

int knobs_t::value(int option) const {
    for (const auto &[o, v] : transport_values_)
        if (o == option)
            return v;
    const knob_desc *d = find_knob(option);
    return d ? unset_value(*d) : -1;
}

void knobs_t::assign(const knob_desc &d, int v) {
    if (d.option == ZMQ_ASIO_IN_BATCH_SIZE) {
        in_batch = v;
        in_batch_set = true;
        return;
    }
    if (d.option == ZMQ_ASIO_OUT_BATCH_SIZE) {
        out_batch = v;
        out_batch_set = true;
        return;
    }
    for (auto &[o, stored] : transport_values_)
        if (o == d.option) {
            stored = v;
            return;
        }
    transport_values_.emplace_back(d.option, v);
}

int knobs_t::in_ceiling_for(int transport_option) const {
    return ceiling(transport_option ? value(transport_option) : -1, in_batch_set, in_batch);
}

int knobs_t::out_ceiling_for(int transport_option) const {
    return ceiling(transport_option ? value(transport_option) : -1, out_batch_set, out_batch);
}

int knobs_t::in_for(int transport_option) const {
    int v = transport_option ? value(transport_option) : -1;
    return v > 0 ? v : in_batch;
}

int knobs_t::out_for(int transport_option) const {
    int v = transport_option ? value(transport_option) : -1;
    return v > 0 ? v : out_batch;
}

}  // namespace zlink
