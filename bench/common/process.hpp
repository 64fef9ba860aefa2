// Process-wide exits and the watchdog.
//
// A benchmark must never hang: a peer that never shows up, a stalled transfer or a
// zmq_ctx_term that blocks all end in a clear message and a fixed exit status.
// Exits go through _exit() so that no destructor (and no zmq_ctx_term) can block.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

namespace bench {

inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitTimeout = 3;
inline constexpr int kExitVerify = 4;

void set_program_name(const std::string &name);
const std::string &program_name();

// Files (ipc socket paths) to unlink on every exit path.
void register_cleanup_path(const std::string &path);
void cleanup_paths();

// Extra explanation appended to timeout messages from now on (e.g. that the pattern
// may legitimately lose messages with the settings in use). Set before threads start.
void set_timeout_hint(const std::string &hint);

// Prints "<prog>: <what>" to stderr, removes registered files and _exit()s.
[[noreturn]] void exit_timeout(const std::string &what);
[[noreturn]] void exit_error(const std::string &what);
[[noreturn]] void exit_usage(const std::string &what);  // status 2, no usage text

// Progress counters are per thread (one cache line each) and written with relaxed
// stores, so kicking the watchdog on every message costs next to nothing.
struct alignas(64) ProgressSlot {
    std::atomic<std::uint64_t> value{0};
    void kick() {
        value.store(value.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
};

// Fires exit_timeout() when no slot moved for `limit_ms`. The per-operation
// timeouts (ZMQ_RCVTIMEO etc.) normally fire first; this is the backstop.
class Watchdog {
public:
    static constexpr int kSlots = 4;
    void start(int limit_ms);
    void stop();
    ProgressSlot &slot(int i) { return slots_[i]; }
    void set_phase(const char *phase) { phase_.store(phase, std::memory_order_relaxed); }
    const char *phase() const { return phase_.load(std::memory_order_relaxed); }
    ~Watchdog() { stop(); }

private:
    void loop(int limit_ms);
    ProgressSlot slots_[kSlots];
    std::atomic<const char *> phase_{"setup"};
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace bench
