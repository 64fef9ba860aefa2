// knobs_t: the I/O tuning knobs of the published reports (ZMQ_ASIO_*).
// Read once per context from the environment; zmq_ctx_set can override them
// (zlink.h).  A per-transport batch size (> 0) wins over the global one.
#pragma once
#include <string>

namespace zlink {

enum class transport_kind { tcp, ipc, inproc };

struct knobs_t {
    // Unset, a connection's batches start at default_batch and adapt up to
    // adaptive_ceiling (transport/batch_size.hpp); a size the user sets is static.
    static constexpr int default_batch = 8192;
    static constexpr int adaptive_ceiling = 64 * 1024;
    static constexpr int min_batch = 256;
    static constexpr int max_batch = 64 * 1024 * 1024;
    static constexpr int max_transfer_limit = 1 << 30;

    int in_batch = default_batch;
    int out_batch = default_batch;
    int in_batch_tcp = -1, out_batch_tcp = -1;
    int in_batch_ipc = -1, out_batch_ipc = -1;
    int in_batch_inproc = -1, out_batch_inproc = -1;
    int tcp_max_transfer = 0;  // 0: no cap beyond the batch itself
    bool in_batch_set = false, out_batch_set = false;  // the global sizes were given

    // Reads ZMQ_ASIO_* variables; malformed values are reported on stderr
    // (once per variable per process) and replaced by the default.
    static knobs_t from_env();
    // zlink.h context options; -1/EINVAL for unknown option or bad value.
    int set(int option, int value);
    int get(int option, int &value) const;
    int in_for(transport_kind t) const;
    int out_for(transport_kind t) const;
    // The largest batch a connection may grow to: the size itself when set.
    int in_ceiling_for(transport_kind t) const;
    int out_ceiling_for(transport_kind t) const;

private:
    void assign(int knobs_t::*field, int value);  // notes which sizes were given
};

}  // namespace zlink
