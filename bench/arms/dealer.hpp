// Re-dealing thread placement between rounds (--redeal on; issue 41).
//
// Unpinned ("free") runs carry an offset of their own: where the scheduler puts the
// side threads and each library's IO threads at a run's start mostly holds for the
// whole run, so the spread of a run's zlink/libzmq ratio is ~3x what its own rounds
// predict (docs/design/2026-12-03-run-offsets.md). The dealer turns that offset into
// round noise, which the run's rounds average out: at the start of every round each
// thread is pinned to one random CPU of its own home mask (the CPUs it may use in
// this placement), and once it has run there (at its slice's warm-up barrier, before
// the clock starts) it gets its home mask back, so the timed part runs unpinned from
// a fresh start. A thread sleeping when pinned moves only when it next wakes, hence
// the release waits for the warm-up rather than following the deal at once.
// Threads whose home mask holds one CPU (one-core, split) are left alone: there the
// dealer changes nothing.
#pragma once

#include <cstdint>
#include <mutex>
#include <random>
#include <vector>

namespace bench::arms {

class Dealer {
public:
    // Group 0: the process's side threads; group k + 1: arm k's library threads.
    static constexpr std::size_t kSides = 0;
    static std::size_t arm_group(std::size_t arm) { return arm + 1; }

    // Inactive until configured: every call is then a no-op.
    void configure(bool active, std::uint64_t seed) {
        active_ = active;
        rng_.seed(seed);
    }
    bool active() const { return active_; }

    // Records `tid` with the mask it has now as its home (once per tid).
    void add(std::size_t group, int tid);
    // Pins every recorded thread to one random CPU of its home mask.
    void deal();
    // Gives the threads of `group` and the side threads their home masks back.
    void release(std::size_t group);

    std::uint64_t deals() const { return deals_; }
    std::uint64_t pins() const { return pins_; }
    std::uint64_t releases() const { return releases_; }  // equal to pins() once a run ends
    std::size_t threads() const { return threads_.size(); }

private:
    struct Dealt {
        int tid = 0;
        std::size_t group = 0;
        std::vector<int> home;  // the CPUs of its mask when recorded
        bool pinned = false;
    };
    void set_mask(Dealt &t, const std::vector<int> &cpus);

    bool active_ = false;
    std::mt19937_64 rng_;
    std::mutex m_;  // one process may run both sides (role both)
    std::vector<Dealt> threads_;
    std::uint64_t deals_ = 0, pins_ = 0, releases_ = 0;
};

}  // namespace bench::arms
