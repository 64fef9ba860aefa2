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

struct knob_desc {
    int option;
    const char *name;
    int knobs_t::*field;
    bool is_transfer;  // 0 allowed (= default), different range
};

const knob_desc table[] = {
    {ZMQ_ASIO_IN_BATCH_SIZE, "ZMQ_ASIO_IN_BATCH_SIZE", &knobs_t::in_batch, false},
    {ZMQ_ASIO_OUT_BATCH_SIZE, "ZMQ_ASIO_OUT_BATCH_SIZE", &knobs_t::out_batch, false},
    {ZMQ_ASIO_IN_BATCH_SIZE_TCP, "ZMQ_ASIO_IN_BATCH_SIZE_TCP", &knobs_t::in_batch_tcp, false},
    {ZMQ_ASIO_OUT_BATCH_SIZE_TCP, "ZMQ_ASIO_OUT_BATCH_SIZE_TCP", &knobs_t::out_batch_tcp, false},
    {ZMQ_ASIO_IN_BATCH_SIZE_IPC, "ZMQ_ASIO_IN_BATCH_SIZE_IPC", &knobs_t::in_batch_ipc, false},
    {ZMQ_ASIO_OUT_BATCH_SIZE_IPC, "ZMQ_ASIO_OUT_BATCH_SIZE_IPC", &knobs_t::out_batch_ipc, false},
    {ZMQ_ASIO_IN_BATCH_SIZE_INPROC, "ZMQ_ASIO_IN_BATCH_SIZE_INPROC", &knobs_t::in_batch_inproc,
     false},
    {ZMQ_ASIO_OUT_BATCH_SIZE_INPROC, "ZMQ_ASIO_OUT_BATCH_SIZE_INPROC",
     &knobs_t::out_batch_inproc, false},
    {ZMQ_ASIO_TCP_MAX_TRANSFER, "ZMQ_ASIO_TCP_MAX_TRANSFER", &knobs_t::tcp_max_transfer, true},
};

bool in_range(const knob_desc &d, long long v) {
    if (d.is_transfer)
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
    std::fprintf(stderr,
                 "zlink: ignoring %s='%s' (allowed: %s integer bytes %d..%d); using %d\n",
                 d.name, text, d.is_transfer ? "0 or an" : "an", knobs_t::min_batch,
                 d.is_transfer ? knobs_t::max_transfer_limit : knobs_t::max_batch, used);
}

}  // namespace

knobs_t knobs_t::from_env() {
    knobs_t k;
    for (const auto &d : table) {
        const char *text = std::getenv(d.name);
        if (!text)
            continue;
        char *end = nullptr;
        errno = 0;
        long long v = std::strtoll(text, &end, 10);
        if (errno == 0 && end != text && *end == '\0' && in_range(d, v))
            k.assign(d.field, static_cast<int>(v));
        else
            report_once(d, text, k.*d.field);
    }
    return k;
}

int knobs_t::set(int option, int value) {
    for (const auto &d : table)
        if (d.option == option) {
            // -1 resets a per-transport override to "use the global value".
            bool per_transport = !d.is_transfer && d.field != &knobs_t::in_batch &&
                                 d.field != &knobs_t::out_batch;
            if (in_range(d, value) || (per_transport && value == -1)) {
                assign(d.field, value);
                return 0;
            }
            errno = EINVAL;
            return -1;
        }
    errno = EINVAL;
    return -1;
}

int knobs_t::get(int option, int &value) const {
    for (const auto &d : table)
        if (d.option == option) {
            value = this->*d.field;
            return 0;
        }
    errno = EINVAL;
    return -1;
}

void knobs_t::assign(int knobs_t::*field, int value) {
    this->*field = value;
    if (field == &knobs_t::in_batch)
        in_batch_set = true;
    else if (field == &knobs_t::out_batch)
        out_batch_set = true;
}

namespace {
// The per-transport value of a knob for t (-1 when not set).
int for_transport(transport_kind t, int tcp, int ipc, int inproc) {
    return t == transport_kind::tcp ? tcp : t == transport_kind::ipc ? ipc : inproc;
}

int ceiling(int per_transport, bool global_set, int global) {
    if (per_transport > 0)
        return per_transport;
    return global_set ? global : std::max(global, knobs_t::adaptive_ceiling);
}
}  // namespace

int knobs_t::in_ceiling_for(transport_kind t) const {
    return ceiling(for_transport(t, in_batch_tcp, in_batch_ipc, in_batch_inproc), in_batch_set,
                   in_batch);
}

int knobs_t::out_ceiling_for(transport_kind t) const {
    return ceiling(for_transport(t, out_batch_tcp, out_batch_ipc, out_batch_inproc),
                   out_batch_set, out_batch);
}

int knobs_t::in_for(transport_kind t) const {
    int v = for_transport(t, in_batch_tcp, in_batch_ipc, in_batch_inproc);
    return v > 0 ? v : in_batch;
}

int knobs_t::out_for(transport_kind t) const {
    int v = for_transport(t, out_batch_tcp, out_batch_ipc, out_batch_inproc);
    return v > 0 ? v : out_batch;
}

}  // namespace zlink
