#include "placement.hpp"

#include <dirent.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#include "process.hpp"

namespace bench {

namespace {

bool parse_int(std::string_view s, int &v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return !s.empty() && ec == std::errc() && p == s.data() + s.size() && v >= 0 && v < CPU_SETSIZE;
}

// One comma-separated item: N, N-M or N-M:S.
bool parse_item(std::string_view item, std::set<int> &out, std::string &error) {
    const auto colon = item.find(':');
    const std::string_view range = item.substr(0, colon);
    int stride = 1;
    if (colon != std::string_view::npos &&
        (!parse_int(item.substr(colon + 1), stride) || stride == 0)) {
        error = "bad stride in '" + std::string(item) + "'";
        return false;
    }
    const auto dash = range.find('-');
    int lo = 0, hi = 0;
    const bool ok = dash == std::string_view::npos
                        ? parse_int(range, lo) && (hi = lo, colon == std::string_view::npos)
                        : parse_int(range.substr(0, dash), lo) &&
                              parse_int(range.substr(dash + 1), hi) && lo <= hi;
    if (!ok) {
        error = "'" + std::string(item) + "' is not a CPU number or range (0.." +
                std::to_string(CPU_SETSIZE - 1) + ")";
        return false;
    }
    for (int c = lo; c <= hi; c += stride)
        out.insert(c);
    return true;
}

std::string read_status_field(int tid, const char *field) {
    std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/status");
    std::string line;
    const std::string prefix = std::string(field) + ":";
    while (std::getline(in, line))
        if (line.rfind(prefix, 0) == 0) {
            const auto start = line.find_first_not_of(" \t", prefix.size());
            return start == std::string::npos ? "" : line.substr(start);
        }
    return "";
}

std::string read_comm(int tid) {
    std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/comm");
    std::string name;
    std::getline(in, name);
    return name;
}

}  // namespace

bool CpuList::parse(std::string_view text, CpuList &out, std::string &error) {
    std::set<int> cpus;
    if (text.empty()) {
        error = "empty CPU list";
        return false;
    }
    while (!text.empty()) {
        const auto comma = text.find(',');
        if (!parse_item(text.substr(0, comma), cpus, error))
            return false;
        text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    }
    out.cpus_.assign(cpus.begin(), cpus.end());
    return true;
}

CpuList CpuList::of_mask(const cpu_set_t &mask) {
    CpuList l;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &mask))
            l.cpus_.push_back(c);
    return l;
}

std::string CpuList::str() const {
    std::string s;
    for (std::size_t i = 0; i < cpus_.size();) {
        std::size_t j = i;
        while (j + 1 < cpus_.size() && cpus_[j + 1] == cpus_[j] + 1)
            ++j;
        if (!s.empty())
            s += ',';
        s += std::to_string(cpus_[i]);
        if (j > i)
            s += "-" + std::to_string(cpus_[j]);
        i = j + 1;
    }
    return s;
}

cpu_set_t CpuList::mask() const {
    cpu_set_t m;
    CPU_ZERO(&m);
    for (int c : cpus_)
        CPU_SET(c, &m);
    return m;
}

CpuList CpuList::missing_from(const CpuList &allowed) const {
    CpuList out;
    for (int c : cpus_)
        if (!std::binary_search(allowed.cpus_.begin(), allowed.cpus_.end(), c))
            out.cpus_.push_back(c);
    return out;
}

CpuList allowed_cpus() {
    cpu_set_t m;
    CPU_ZERO(&m);
    if (sched_getaffinity(0, sizeof m, &m) != 0)
        exit_error(std::string("sched_getaffinity: ") + std::strerror(errno));
    return CpuList::of_mask(m);
}

void pin_current_thread(const CpuList &cpus, const char *why) {
    const cpu_set_t m = cpus.mask();
    if (sched_setaffinity(0, sizeof m, &m) != 0)
        exit_error(std::string("pinning ") + why + " to CPUs " + cpus.str() + ": " +
                   std::strerror(errno));
}

void name_current_thread(const char *name) { pthread_setname_np(pthread_self(), name); }

int current_tid() { return static_cast<int>(::syscall(SYS_gettid)); }

std::vector<int> list_tids() {
    std::vector<int> tids;
    if (DIR *d = ::opendir("/proc/self/task")) {
        while (const dirent *e = ::readdir(d)) {
            int tid = 0;
            const std::string_view name = e->d_name;
            auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), tid);
            if (ec == std::errc() && p == name.data() + name.size())
                tids.push_back(tid);
        }
        ::closedir(d);
    }
    std::sort(tids.begin(), tids.end());
    return tids;
}

std::vector<int> tids_since(const std::vector<int> &before) {
    std::vector<int> fresh;
    for (int tid : list_tids())
        if (!std::binary_search(before.begin(), before.end(), tid))
            fresh.push_back(tid);
    return fresh;
}

namespace {
std::mutex g_census_mutex;
std::map<int, std::string> g_roles;    // registered harness threads
std::map<int, std::string> g_library;  // library threads by the side that created them
}  // namespace

void ThreadCensus::register_self(const std::string &role) {
    std::lock_guard lock(g_census_mutex);
    g_roles[current_tid()] = role;
}

void ThreadCensus::attribute_new(const std::vector<int> &before, const std::string &role) {
    const std::vector<int> fresh = tids_since(before);
    std::lock_guard lock(g_census_mutex);
    for (int tid : fresh)
        if (!g_roles.count(tid) && !g_library.count(tid))
            g_library[tid] = role;
}

std::vector<ThreadInfo> ThreadCensus::read(const std::string &unknown_role) const {
    std::vector<ThreadInfo> out;
    for (int tid : list_tids()) {
        ThreadInfo t;
        t.tid = tid;
        t.name = read_comm(tid);
        t.cpus = read_status_field(tid, "Cpus_allowed_list");
        std::lock_guard lock(g_census_mutex);
        if (auto it = g_roles.find(tid); it != g_roles.end())
            t.role = it->second;
        else if (auto jt = g_library.find(tid); jt != g_library.end())
            t.role = jt->second;
        else
            t.role = unknown_role;
        out.push_back(std::move(t));
    }
    return out;
}

ThreadCensus &thread_census() {
    static ThreadCensus census;
    return census;
}

}  // namespace bench
