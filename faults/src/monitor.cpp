#include "monitor.hpp"

#include <zmq.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace faults {
namespace {

std::atomic<int> next_id{0};

// Events as zmq.h 4.3.5 defines them outside the draft API.
const char *name_of(int event) {
    switch (event) {
    case ZMQ_EVENT_CONNECTED: return "CONNECTED";
    case ZMQ_EVENT_CONNECT_DELAYED: return "CONNECT_DELAYED";
    case ZMQ_EVENT_CONNECT_RETRIED: return "CONNECT_RETRIED";
    case ZMQ_EVENT_LISTENING: return "LISTENING";
    case ZMQ_EVENT_BIND_FAILED: return "BIND_FAILED";
    case ZMQ_EVENT_ACCEPTED: return "ACCEPTED";
    case ZMQ_EVENT_ACCEPT_FAILED: return "ACCEPT_FAILED";
    case ZMQ_EVENT_CLOSED: return "CLOSED";
    case ZMQ_EVENT_CLOSE_FAILED: return "CLOSE_FAILED";
    case ZMQ_EVENT_DISCONNECTED: return "DISCONNECTED";
    case ZMQ_EVENT_MONITOR_STOPPED: return "MONITOR_STOPPED";
    case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL: return "HANDSHAKE_FAILED_NO_DETAIL";
    case ZMQ_EVENT_HANDSHAKE_SUCCEEDED: return "HANDSHAKE_SUCCEEDED";
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL: return "HANDSHAKE_FAILED_PROTOCOL";
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH: return "HANDSHAKE_FAILED_AUTH";
    default: return "OTHER";
    }
}

}  // namespace

const char *event_name(int event) { return name_of(event); }

Monitor::Monitor(void *ctx, void *socket, const std::string &label, EventLog &log)
    : socket_(socket), label_(label), log_(log) {
    const std::string endpoint = "inproc://fault-monitor-" + std::to_string(next_id++);
    if (zmq_socket_monitor(socket_, endpoint.c_str(), ZMQ_EVENT_ALL) != 0 ||
        !(reader_ = zmq_socket(ctx, ZMQ_PAIR)) || zmq_connect(reader_, endpoint.c_str()) != 0) {
        std::fprintf(stderr, "fault_driver: monitor: %s\n", zmq_strerror(zmq_errno()));
        std::exit(3);
    }
    const int timeout_ms = 100;  // so the thread sees stop_ even when nothing happens
    zmq_setsockopt(reader_, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    thread_ = std::thread([this] { run(); });
}

Monitor::~Monitor() {
    zmq_socket_monitor(socket_, nullptr, 0);  // sends MONITOR_STOPPED to the reader
    stop_ = true;
    thread_.join();
    const int linger = 0;
    zmq_setsockopt(reader_, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(reader_);
}

void Monitor::run() {
    for (;;) {
        zmq_msg_t head, addr;
        zmq_msg_init(&head);
        if (zmq_msg_recv(&head, reader_, 0) < 0) {
            zmq_msg_close(&head);
            if (stop_)
                return;
            continue;
        }
        std::uint16_t event = 0;
        std::uint32_t value = 0;
        if (zmq_msg_size(&head) >= 6) {
            std::memcpy(&event, zmq_msg_data(&head), 2);
            std::memcpy(&value, static_cast<char *>(zmq_msg_data(&head)) + 2, 4);
        }
        zmq_msg_close(&head);
        zmq_msg_init(&addr);
        zmq_msg_recv(&addr, reader_, 0);
        const std::string where(static_cast<char *>(zmq_msg_data(&addr)), zmq_msg_size(&addr));
        zmq_msg_close(&addr);
        log_.line("monitor", "\"socket\":" + json_string(label_) + ",\"event\":\"" +
                                 name_of(event) + "\",\"value\":" + std::to_string(value) +
                                 ",\"addr\":" + json_string(where));
        if (event == ZMQ_EVENT_MONITOR_STOPPED)
            return;
    }
}

}  // namespace faults
