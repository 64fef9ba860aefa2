// Where the benchmark's threads run, and proof of where they ran.
//
// Placement is the main source of noise on small hosts: which of the sender, the
// receiver and the library's IO threads share a core decides the result (bimodal,
// CV ~40% unpinned). So the harness pins each side on request, and after the run it
// reads every thread's affinity back from /proc instead of assuming it.
#pragma once

#include <sched.h>

#include <string>
#include <string_view>
#include <vector>

namespace bench {

// A set of CPU numbers written in taskset's list syntax: "0", "0-3", "0,2,5-7",
// "0-7:2" (a range with a stride).
class CpuList {
public:
    // Parses `text`; on bad syntax returns false and says why in `error`.
    static bool parse(std::string_view text, CpuList &out, std::string &error);
    static CpuList of_mask(const cpu_set_t &mask);

    bool empty() const { return cpus_.empty(); }
    const std::vector<int> &cpus() const { return cpus_; }
    // Canonical list form ("0-2,5"), as /proc's Cpus_allowed_list prints it.
    std::string str() const;
    cpu_set_t mask() const;
    // The CPUs of this list that `allowed` lacks (empty: all allowed).
    CpuList missing_from(const CpuList &allowed) const;

private:
    std::vector<int> cpus_;  // sorted, unique
};

// CPUs this process may use (sched_getaffinity of the calling thread at start-up).
CpuList allowed_cpus();

// Pins the calling thread; threads it creates afterwards inherit the mask. Failure
// ends the run (exit 1): a placement that was asked for is never silently dropped.
void pin_current_thread(const CpuList &cpus, const char *why);

// Names the calling thread (shows in /proc/self/task/<tid>/comm; max 15 chars).
void name_current_thread(const char *name);

int current_tid();

// Thread ids of this process right now (/proc/self/task).
std::vector<int> list_tids();
// The ones of them not in `before` (a sorted list_tids()): threads started since.
std::vector<int> tids_since(const std::vector<int> &before);

struct ThreadInfo {
    int tid = 0;
    std::string name;  // comm
    std::string role;  // main, sender, receiver, watchdog, control, library:<side>, library
    std::string cpus;  // Cpus_allowed_list
};

// Who is who among this process's threads. The harness registers its own threads;
// a library's threads are attributed to the side whose context set-up created them
// (the tids that appear across that set-up), since IO threads are started lazily by
// the first zmq_socket() and inherit the creating thread's affinity.
class ThreadCensus {
public:
    void register_self(const std::string &role);
    // Tids that appeared between `before` and now, not registered, become `role`.
    void attribute_new(const std::vector<int> &before, const std::string &role);
    // Reads /proc for every live thread; unattributed ones get `unknown_role`
    // ("library" in one process; in a role process every library thread is its side's).
    std::vector<ThreadInfo> read(const std::string &unknown_role) const;
};

ThreadCensus &thread_census();

}  // namespace bench
