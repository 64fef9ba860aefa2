#include "counters.hpp"

#include <linux/perf_event.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace bench::arms {

namespace {

long perf_event_open(perf_event_attr *attr, int group_fd) {
    return ::syscall(SYS_perf_event_open, attr, 0 /* this process */, -1 /* any CPU */, group_fd,
                     PERF_FLAG_FD_CLOEXEC);
}

// The tracepoint's id from tracefs, or -1 (and why).
long tracepoint_id(const std::string &event, std::string &why) {
    for (const char *root : {"/sys/kernel/tracing/events/", "/sys/kernel/debug/tracing/events/"}) {
        std::ifstream in(std::string(root) + event + "/id");
        long id = -1;
        if (in >> id)
            return id;
    }
    why = "no tracefs id for " + event;
    return -1;
}

// Data and waiting syscalls counted by name (the tracepoints syscalls:sys_enter_NAME).
constexpr const char *kNamedSyscalls[] = {
    "read",    "write", "readv", "writev",     "sendto",      "recvfrom", "sendmsg",
    "recvmsg", "poll",  "ppoll", "epoll_wait", "epoll_pwait", "futex"};

// Runs a little work and says whether a freshly opened counter moved.
bool counts(int fd) {
    std::uint64_t before[2] = {}, after[2] = {};
    if (::read(fd, before, sizeof before) < 0)
        return false;
    volatile std::uint64_t x = 0;
    for (int i = 0; i < 100000; ++i)
        x = x + static_cast<std::uint64_t>(i);
    if (::read(fd, after, sizeof after) < 0)
        return false;
    return after[1] > before[1];
}

}  // namespace

Counters::~Counters() {
    for (const Group *g : {&software_, &hardware_})
        for (int fd : g->fds)
            ::close(fd);
}

bool Counters::add(Group &g, const std::string &name, std::uint32_t type, std::uint64_t config) {
    perf_event_attr a{};
    a.size = sizeof a;
    a.type = type;
    a.config = config;
    a.inherit = 1;  // threads started later are counted (the library's IO threads)
    a.exclude_hv = 1;
    a.read_format = PERF_FORMAT_GROUP;
    long fd = perf_event_open(&a, g.leader);
    if (fd < 0 && errno == EACCES && type == PERF_TYPE_HARDWARE) {
        a.exclude_kernel = 1;  // a host that allows user-space counting only
        fd = perf_event_open(&a, g.leader);
    }
    if (fd < 0) {
        unavailable_.emplace_back(
            name, std::string(strerrorname_np(errno) ? strerrorname_np(errno) : "error") + ": " +
                      std::strerror(errno));
        return false;
    }
    if (g.leader < 0)
        g.leader = static_cast<int>(fd);
    g.fds.push_back(static_cast<int>(fd));
    g.slots.push_back(names_.size());
    names_.push_back(name);
    return true;
}

void Counters::open_perf(bool tracepoints) {
    add(software_, "task_clock_ns", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
    if (software_.leader < 0)
        return;  // no perf_event_open at all here
    add(software_, "context_switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES);
    add(software_, "cpu_migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS);
    add(software_, "page_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
    if (!tracepoints)
        return;
    std::string why;
    if (const long id = tracepoint_id("raw_syscalls/sys_enter", why); id >= 0)
        tracepoints_ |=
            add(software_, "syscalls", PERF_TYPE_TRACEPOINT, static_cast<std::uint64_t>(id));
    else
        unavailable_.emplace_back("syscalls", why);
    for (const char *sc : kNamedSyscalls) {
        const std::string name = std::string("syscalls_") + sc;
        if (const long id = tracepoint_id(std::string("syscalls/sys_enter_") + sc, why); id >= 0)
            tracepoints_ |=
                add(software_, name, PERF_TYPE_TRACEPOINT, static_cast<std::uint64_t>(id));
        else
            unavailable_.emplace_back(name, why);
    }
    // Hardware: only if the event opens and actually counts here.
    for (const auto &[name, config] : {std::pair{"instructions", PERF_COUNT_HW_INSTRUCTIONS},
                                       std::pair{"cycles", PERF_COUNT_HW_CPU_CYCLES}}) {
        const std::size_t before = names_.size();
        if (!add(hardware_, name, PERF_TYPE_HARDWARE, config))
            continue;
        if (!counts(hardware_.leader)) {
            ::close(hardware_.fds.back());
            hardware_.fds.pop_back();
            hardware_.slots.pop_back();
            names_.resize(before);
            if (hardware_.fds.empty())
                hardware_.leader = -1;
            unavailable_.emplace_back(name, "opens but does not count on this host");
        }
    }
}

void Counters::open(CountersMode mode) {
    if (mode == CountersMode::off)
        return;
    if (mode == CountersMode::automatic || mode == CountersMode::software)
        open_perf(mode == CountersMode::automatic);
    if (!names_.empty()) {
        source_ = "perf_event_open";
        // perf has no event for voluntary switches alone; getrusage counts them for
        // the whole process (every thread), the same scope as the inherited events.
        voluntary_slot_ = names_.size();
        names_.push_back("voluntary_context_switches");
        // A snapshot reads the software group (which holds the syscall counts) first,
        // then the hardware group. So of the two snapshots around a slice, the start's
        // hardware read and the end's software read fall inside the window: one read
        // syscall per group, which is taken off; so is the start's getrusage, which
        // comes last in a snapshot.
        const std::uint64_t reads = hardware_.leader >= 0 ? 2 : 1;
        self_.assign(names_.size(), 0);
        for (std::size_t i = 0; i < names_.size(); ++i)
            if (names_[i] == "syscalls_read")
                self_[i] = reads;
            else if (names_[i] == "syscalls")
                self_[i] = reads + 1;
        return;
    }
    source_ = "getrusage";
    names_ = {"cpu_time_ns", "context_switches", "page_faults", "voluntary_context_switches"};
    voluntary_slot_ = 3;
    self_.assign(names_.size(), 0);
}

void Counters::read_group(const Group &g, std::vector<std::uint64_t> &out) const {
    if (g.leader < 0)
        return;
    std::vector<std::uint64_t> buf(1 + g.fds.size());
    if (::read(g.leader, buf.data(), buf.size() * sizeof buf[0]) < 0)
        return;  // leaves zeros: cannot happen on an open group
    for (std::size_t i = 0; i < g.fds.size() && i < buf[0]; ++i)
        out[g.slots[i]] = buf[1 + i];
}

std::vector<std::uint64_t> Counters::read() const {
    std::vector<std::uint64_t> out(names_.size(), 0);
    if (std::strcmp(source_, "perf_event_open") == 0) {
        // Software first: see open() for what that means for the syscall counts.
        read_group(software_, out);
        read_group(hardware_, out);
        rusage u{};
        ::getrusage(RUSAGE_SELF, &u);
        out[voluntary_slot_] = static_cast<std::uint64_t>(u.ru_nvcsw);
    } else if (std::strcmp(source_, "getrusage") == 0) {
        rusage u{};
        ::getrusage(RUSAGE_SELF, &u);
        auto ns = [](const timeval &t) {
            return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000ULL +
                   static_cast<std::uint64_t>(t.tv_usec) * 1000ULL;
        };
        out[0] = ns(u.ru_utime) + ns(u.ru_stime);
        out[1] = static_cast<std::uint64_t>(u.ru_nvcsw + u.ru_nivcsw);
        out[2] = static_cast<std::uint64_t>(u.ru_minflt + u.ru_majflt);
        out[3] = static_cast<std::uint64_t>(u.ru_nvcsw);
    }
    return out;
}

std::vector<std::uint64_t> Counters::delta(const std::vector<std::uint64_t> &before,
                                           const std::vector<std::uint64_t> &after) const {
    std::vector<std::uint64_t> d(names_.size(), 0);
    for (std::size_t i = 0; i < names_.size(); ++i) {
        const std::uint64_t raw = after[i] >= before[i] ? after[i] - before[i] : 0;
        d[i] = raw >= self_[i] ? raw - self_[i] : 0;
    }
    return d;
}

}  // namespace bench::arms
