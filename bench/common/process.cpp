#include "process.hpp"

#include "placement.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <vector>

namespace bench {

namespace {
std::string g_name = "bench";
std::mutex g_paths_mutex;
std::vector<std::string> g_paths;
std::mutex g_exit_mutex;  // one exit message, even if two threads fail at once
std::string g_timeout_hint;
}  // namespace

void set_timeout_hint(const std::string &hint) { g_timeout_hint = hint; }

void set_program_name(const std::string &name) { g_name = name; }
const std::string &program_name() { return g_name; }

void register_cleanup_path(const std::string &path) {
    std::lock_guard lock(g_paths_mutex);
    g_paths.push_back(path);
}

void cleanup_paths() {
    std::lock_guard lock(g_paths_mutex);
    for (const auto &p : g_paths)
        ::unlink(p.c_str());
    g_paths.clear();
}

[[noreturn]] static void die(int status, const char *kind, const std::string &what) {
    g_exit_mutex.lock();  // never unlocked: the process ends here
    std::fprintf(stderr, "%s: %s%s\n", g_name.c_str(), kind, what.c_str());
    std::fflush(stderr);
    std::fflush(stdout);
    cleanup_paths();
    ::_exit(status);
}

void exit_timeout(const std::string &what) {
    die(kExitTimeout, "timeout: ", what + g_timeout_hint);
}
void exit_error(const std::string &what) { die(kExitError, "error: ", what); }
void exit_usage(const std::string &what) { die(kExitUsage, "", what); }

void Watchdog::start(int limit_ms) {
    thread_ = std::thread([this, limit_ms] {
        name_current_thread("bench-watchdog");
        thread_census().register_self("watchdog");
        loop(limit_ms);
    });
}

void Watchdog::stop() {
    stop_.store(true);
    if (thread_.joinable())
        thread_.join();
}

void Watchdog::loop(int limit_ms) {
    using namespace std::chrono;
    std::uint64_t last = ~0ULL;
    auto last_change = steady_clock::now();
    while (!stop_.load()) {
        std::this_thread::sleep_for(milliseconds(20));
        std::uint64_t sum = 0;
        for (auto &s : slots_)
            sum += s.value.load(std::memory_order_relaxed);
        const auto now = steady_clock::now();
        if (sum != last) {
            last = sum;
            last_change = now;
        } else if (duration_cast<milliseconds>(now - last_change).count() > limit_ms) {
            exit_timeout(std::string("no progress for ") + std::to_string(limit_ms) +
                         " ms during " + phase_.load(std::memory_order_relaxed) + " (watchdog)");
        }
    }
}

}  // namespace bench
