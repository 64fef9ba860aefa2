// knobs_t: the I/O tuning knobs of the published reports (ZMQ_ASIO_*).
// Read once per context from the environment; zmq_ctx_set can override them
// (zlink.h).  A per-transport batch size (> 0) wins over the global one.
//
// The core owns the global knobs only. Each transport declares its own knobs
// (transport::knobs(), e.g. tcp's ZMQ_ASIO_IN_BATCH_SIZE_TCP and
// ZMQ_ASIO_TCP_MAX_TRANSFER) and decides what they mean for its connections,
// so the core keeps no second list of transports: it stores a declared knob's
// value by option number and never names tcp, ipc or inproc.
#pragma once
#include <span>
#include <utility>
#include <vector>

namespace zlink {

// One knob: zmq_ctx_set/get option number and the environment variable of the
// same name. A batch knob of a transport is unset at -1 (then the global size
// applies); a transfer cap is 0 (none) or a size.
struct knob_desc {
    enum class range_t { batch, transfer };
    int option;
    const char *name;
    range_t range;
};

// Every transport's declared knobs; defined by transport/transports.cpp (as
// find_transport is), so core/ does not include transport/.
std::span<const knob_desc> transport_knobs();

struct knobs_t {
    // Unset, a connection's batches start at default_batch and adapt up to
    // adaptive_ceiling (transport/batch_size.hpp); a size the user sets is
    // static. options_t::batch_options takes its defaults from here, so these
    // are the one place the defaults are written.
    static constexpr int default_batch = 8192;
    static constexpr int adaptive_ceiling = 64 * 1024;
    static constexpr int min_batch = 256;
    static constexpr int max_batch = 64 * 1024 * 1024;
    static constexpr int max_transfer_limit = 1 << 30;

    int in_batch = default_batch;
    int out_batch = default_batch;
    bool in_batch_set = false, out_batch_set = false;  // the global sizes were given

    // Reads ZMQ_ASIO_* variables; malformed values are reported on stderr
    // (once per variable per process) and replaced by the default.
    static knobs_t from_env();
    // zlink.h context options; -1/EINVAL for unknown option or bad value.
    int set(int option, int value);
    int get(int option, int &value) const;
    // A transport knob's value: as set, else its unset value (-1 batch, 0 transfer).
    int value(int option) const;
    // The batch a connection starts with, given the transport's own in/out
    // batch knob (its option number; 0 when it has none).
    int in_for(int transport_option) const;
    int out_for(int transport_option) const;
    // The largest batch a connection may grow to: the size itself when set.
    int in_ceiling_for(int transport_option) const;
    int out_ceiling_for(int transport_option) const;

private:
    void assign(const knob_desc &d, int value);  // notes which sizes were given
    // Transport knobs that were given, by option number (a handful at most).
    std::vector<std::pair<int, int>> transport_values_;
};

}  // namespace zlink
