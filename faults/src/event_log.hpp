// JSON lines about what happened around the messages: monitor events, the phases of
// the process (so a hang names where it hung), RSS and descriptor samples. One
// write(2) per line, so the lines before a SIGKILL are kept. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

namespace faults {

class EventLog {
public:
    explicit EventLog(const std::string &path);
    ~EventLog();
    EventLog(const EventLog &) = delete;
    EventLog &operator=(const EventLog &) = delete;

    // `fields` is the rest of a JSON object without braces, e.g. "\"event\":\"X\"".
    void line(const char *what, const std::string &fields);
    void phase(const char *name);

private:
    int fd_ = -1;
    std::mutex mutex_;
};

std::string json_string(const std::string &s);

}  // namespace faults
