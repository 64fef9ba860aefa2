// Command line of every bench_<pattern> binary (docs/data-formats.md section 3).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "payload.hpp"
#include "placement.hpp"

namespace bench {

enum class Transport { tcp, ipc, inproc };
enum class Mode { thr, lat, both };
// both: one process, a sender and a receiver thread. receiver/sender: this process
// is one side of a two-process (or two-host) run.
enum class Role { both, receiver, sender };
enum class ProcessModel { one_process, two_process, two_host };
// The connection's ZMTP security mechanism: NULL, or CURVE with fixed bench keys
// (the bound sockets are CURVE servers, the connecting ones clients).
enum class Security { null, curve };

const char *to_string(Transport t);
const char *to_string(Mode m);
const char *to_string(Role r);
const char *to_string(ProcessModel p);
const char *to_string(Security s);

// What the pattern accepts; the parser enforces it so every binary rejects the
// same things the same way.
struct PatternTraits {
    const char *name;           // "PAIR", "STREAM", ...
    bool tcp_only = false;      // STREAM talks to a plain TCP peer
    std::size_t min_size = 0;   // STREAM cannot send an empty frame (it means "close")
    bool drops_at_hwm = false;  // PUB drops (by design) instead of blocking at the HWM
    bool lockstep = false;      // REQ/REP: every message is answered before the next is sent
};

// A side's CPU list as asked on the command line (text) and as parsed.
struct Pin {
    std::string asked;  // empty: not pinned (free)
    CpuList cpus;
    bool given() const { return !asked.empty(); }
};

struct Options {
    Transport transport = Transport::tcp;
    std::size_t size = 0;
    std::uint64_t count = 0, warmup = 0;
    std::uint64_t lat_count = 0, lat_warmup = 0;
    int io_threads = 1;
    Security security = Security::null;
    // -1: not set, so each library runs at its own default (1000 in libzmq 4.3.5 and
    // zlink); 0 = unlimited. A pattern that drops at the HWM (PUB) then counts losses.
    int hwm = -1;
    int timeout_ms = 10000;
    int linger = 0;
    int sndbuf = -1, rcvbuf = -1;
    // 0: payloads go out through zmq_send (the library copies them into a message);
    // N >= 2: zero copy, a ring of N buffers sent with zmq_msg_init_data and
    // zmq_msg_send, each reused once the library has freed it (common/send_ring.hpp).
    int send_buffers = 0;
    Mode mode = Mode::both;
    Fault fault = Fault::none;
    bool no_peer = false;  // test-only: run the receiver without any peer
    Role role = Role::both;
    ProcessModel process_model = ProcessModel::one_process;
    // Endpoints: what the receiver binds (first of its sockets; more on neighbouring
    // ephemeral ports/paths), what the sender connects to, and the control connection
    // of a two-process run. Filled with defaults by parse_options.
    std::string bind, connect, control;
    bool connect_given = false;
    Pin pin_sender, pin_receiver;
    CpuList allowed;  // CPUs this process may use (sched_getaffinity at start)
};

// Flags a runner adds to the common ones (the arms bench's --lib, --arm, ...).
// `take` sees every flag with its value before the common parser does: it returns
// Taken (the flag is its own), NotMine (the common parser takes it), or Refused with
// `error` set (a usage error). `finish` runs after the common flags are complete and
// returns "" or a usage error. `usage` is appended to the usage text.
struct ExtraFlags {
    enum Outcome { NotMine, Taken, Refused };
    std::function<Outcome(std::string_view flag, std::string_view value, std::string &error)> take;
    std::function<std::string(Options &o)> finish;
    const char *usage = "";
};

// Parses argv; on bad input prints one error line plus the usage to stderr and
// exits with status 2 (--help: usage on stdout, status 0).
Options parse_options(int argc, char **argv, const PatternTraits &traits,
                      const ExtraFlags *extra = nullptr);

// Defaults sized so that one run takes about 1-3 s on a 2-core loopback host.
std::uint64_t default_count(std::size_t size);
std::uint64_t default_lat_count(std::size_t size);

}  // namespace bench
