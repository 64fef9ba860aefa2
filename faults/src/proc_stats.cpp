#include "proc_stats.hpp"

#include "clock.hpp"

#include <dirent.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace faults {
namespace {

long status_kb(const char *text, const char *key) {
    const char *at = std::strstr(text, key);
    return at ? std::atol(at + std::strlen(key)) : 0;
}

int count_fds() {
    DIR *dir = ::opendir("/proc/self/fd");
    if (!dir)
        return -1;
    int n = 0;
    while (const dirent *e = ::readdir(dir))
        if (e->d_name[0] != '.')
            ++n;
    ::closedir(dir);
    return n - 1;  // the descriptor opendir itself holds
}

}  // namespace

ProcNow read_proc() {
    ProcNow now;
    char text[4096] = {0};
    if (FILE *f = std::fopen("/proc/self/status", "r")) {
        const std::size_t n = std::fread(text, 1, sizeof text - 1, f);
        text[n] = 0;
        std::fclose(f);
    }
    now.rss_kb = status_kb(text, "VmRSS:");
    now.hwm_kb = status_kb(text, "VmHWM:");
    now.fds = count_fds();
    return now;
}

ProcSampler::ProcSampler(EventLog &log, int every_ms)
    : log_(log), every_ms_(every_ms), thread_([this] { run(); }) {}

ProcSampler::~ProcSampler() {
    stop_ = true;
    thread_.join();
}

void ProcSampler::run() {
    while (!stop_) {
        const ProcNow now = read_proc();
        if (now.fds > peak_fds_)
            peak_fds_ = now.fds;
        log_.line("sample", "\"rss_kb\":" + std::to_string(now.rss_kb) +
                                ",\"fds\":" + std::to_string(now.fds));
        for (int waited = 0; waited < every_ms_ && !stop_; waited += 20)
            sleep_ms(20);
    }
}

}  // namespace faults
