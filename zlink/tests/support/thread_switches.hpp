// Voluntary context switches of this process's zlink IO threads, read from
// /proc/self/task/*/status: how often each went to sleep.  Tests that check
// when an IO thread wakes (and sleeps again) compare two readings.
#pragma once

#include <dirent.h>

#include <fstream>
#include <map>
#include <string>

namespace test_support {

// Thread name ("zlink/IO/0", ...) -> voluntary context switches so far.
inline std::map<std::string, long> io_thread_switches() {
    std::map<std::string, long> out;
    DIR *d = ::opendir("/proc/self/task");
    if (!d)
        return out;
    while (dirent *e = ::readdir(d)) {
        if (e->d_name[0] == '.')
            continue;
        std::ifstream status(std::string("/proc/self/task/") + e->d_name + "/status");
        std::string line, name;
        long switches = -1;
        while (std::getline(status, line)) {
            if (line.rfind("Name:", 0) == 0)
                name = line.substr(line.find_first_not_of(" \t", 5));
            else if (line.rfind("voluntary_ctxt_switches:", 0) == 0)
                switches = std::stol(line.substr(24));
        }
        if (name.rfind("zlink/IO/", 0) == 0)
            out[name] += switches;
    }
    ::closedir(d);
    return out;
}

}  // namespace test_support
