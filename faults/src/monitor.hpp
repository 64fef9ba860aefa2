// zmq_socket_monitor on one socket, read by a thread of its own into the event log:
// how the runner times when each side noticed a fault (DISCONNECTED, a failed
// handshake...) and when it was connected again (HANDSHAKE_SUCCEEDED).
#pragma once

#include "event_log.hpp"

#include <atomic>
#include <string>
#include <thread>

namespace faults {

class Monitor {
public:
    // `label` names the socket in the log (a lazy-pirate client has several in turn).
    Monitor(void *ctx, void *socket, const std::string &label, EventLog &log);
    // Stops monitoring (before the socket is closed) and joins the thread.
    ~Monitor();
    Monitor(const Monitor &) = delete;
    Monitor &operator=(const Monitor &) = delete;

private:
    void run();
    void *socket_;
    void *reader_ = nullptr;
    std::string label_;
    EventLog &log_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

const char *event_name(int event);

}  // namespace faults
