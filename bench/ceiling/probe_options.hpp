// Command line of ceiling_probe: the same process model, placement, message sizes
// and socket-buffer flags as the bench cells it bounds (bench/README.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../common/options.hpp"
#include "stream_io.hpp"

namespace bench {

struct ProbeOptions {
    std::vector<std::size_t> sizes{64, 1024, 65536, 262144};
    std::vector<std::string> transports{"tcp", "ipc", "inproc"};
    std::uint64_t bytes = 256ULL << 20;  // streamed per throughput row (plus a tenth of warm-up)
    std::uint64_t lat_samples = 2000;
    // Write sizes tried per row (whole messages, at least this many bytes); the best
    // one is the ceiling, since no single size is the fastest on every host.
    std::vector<std::size_t> write_sizes{65536, 262144, 1048576};
    // Ways of waiting tried per write size (stream_io.hpp).
    std::vector<IoWait> io_waits{IoWait::blocking, IoWait::poll, IoWait::coalesce, IoWait::handoff};
    // The sender writes from a ring of this many source buffers of the row's message
    // size (1: one buffer, always cache-hot), as the bench's zero-copy sender sends from
    // its --send-buffers ring: a ring larger than the cache makes the kernel's copy read
    // from farther away, for the pump as for the libraries.
    std::uint64_t source_messages = 1;
    int timeout_ms = 10000;
    int sndbuf = -1, rcvbuf = -1;  // SO_SNDBUF/SO_RCVBUF as ZMQ_SNDBUF/RCVBUF would set them
    Mode mode = Mode::both;
    Role role = Role::both;
    ProcessModel process_model = ProcessModel::one_process;
    std::string bind, connect;  // role processes: the one stream endpoint
    Pin pin_sender, pin_receiver;
    CpuList allowed;
};

// Parses argv; bad input: one line naming it plus the usage on stderr, exit 2.
ProbeOptions parse_probe_options(int argc, char **argv);

}  // namespace bench
