#include "event_log.hpp"

#include "clock.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace faults {

EventLog::EventLog(const std::string &path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) {
        std::perror(path.c_str());
        std::exit(2);
    }
}

EventLog::~EventLog() {
    if (fd_ >= 0)
        ::close(fd_);
}

void EventLog::line(const char *what, const std::string &fields) {
    std::string text = "{\"t\":" + std::to_string(mono_ns()) + ",\"what\":\"" + what + "\"";
    if (!fields.empty())
        text += "," + fields;
    text += "}\n";
    std::lock_guard<std::mutex> lock(mutex_);
    if (::write(fd_, text.data(), text.size()) != ssize_t(text.size())) {
        std::perror("event log write");
        std::_Exit(4);
    }
}

void EventLog::phase(const char *name) { line("phase", "\"phase\":" + json_string(name)); }

std::string json_string(const std::string &s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

}  // namespace faults
