#include "control.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <chrono>

#include "placement.hpp"
#include "side_threads.hpp"

namespace bench {

namespace {

constexpr int kHeartbeatMs = 200;
constexpr int kControlSlot = 2;  // watchdog slot kicked by every line from the peer
constexpr const char *kHeartbeat = "hb";
constexpr const char *kRefuse = "refuse";

}  // namespace

SocketLink::SocketLink(RawSocket sock, Watchdog &wd, const char *peer)
    : sock_(std::move(sock)), wd_(wd), peer_(peer) {}

std::unique_ptr<SocketLink> SocketLink::accept(const Endpoint &ep, int timeout_ms, Watchdog &wd) {
    RawListener listener = RawListener::at(ep);
    wd.set_phase("waiting for the sender on the control endpoint");
    RawSocket s = listener.accept(timeout_ms, "sender to the control endpoint " + ep.text());
    if (ep.scheme == "tcp")
        s.set_nodelay();
    std::unique_ptr<SocketLink> link(new SocketLink(std::move(s), wd, "sender"));
    link->start_reader();
    return link;
}

std::unique_ptr<SocketLink> SocketLink::connect(const Endpoint &ep, int timeout_ms, Watchdog &wd) {
    wd.set_phase("connecting to the receiver's control endpoint");
    RawSocket s = connect_to_endpoint(ep, timeout_ms, "the receiver's control endpoint");
    std::unique_ptr<SocketLink> link(new SocketLink(std::move(s), wd, "receiver"));
    link->start_reader();
    return link;
}

SocketLink::~SocketLink() { close(); }

void SocketLink::start_reader() {
    reader_ = std::thread([this] {
        name_current_thread("bench-control");
        thread_census().register_self("control");
        reader_loop();
    });
}

void SocketLink::write_line(const std::string &line) {
    std::lock_guard lock(write_mutex_);
    const std::string out = line + "\n";
    const char *p = out.data();
    std::size_t n = out.size();
    while (n > 0) {
        const ssize_t w = ::send(sock_.fd(), p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (finished_.load())
                return;  // the peer may leave once the run is finished
            peer_gone("could not be written to");
        }
        p += w;
        n -= static_cast<std::size_t>(w);
    }
}

void SocketLink::post(Signal s, const std::string &payload) {
    if (s == Signal::finished)
        finished_.store(true);
    write_line(std::string(to_string(s)) + " " + payload);
}

// The refusing side exits (usage, 2) right after this; the peer that reads the
// refusal exits too and closes its end, which must not race the refusing side's own
// exit into "peer gone" (3): from here the link counts as finished.
void SocketLink::refuse(const std::string &reason) {
    finished_.store(true);
    write_line(std::string(kRefuse) + " " + reason);
}

void SocketLink::close() {
    finished_.store(true);
    stop_.store(true);
    if (reader_.joinable())
        reader_.join();
}

void SocketLink::peer_gone(const std::string &how) {
    exit_timeout(std::string("the ") + peer_ + " process's control connection " + how + " during " +
                 wd_.phase() + " (the " + peer_ + " ended, died or gave up; see its own output)");
}

void SocketLink::handle_line(const std::string &line) {
    wd_.slot(kControlSlot).kick();
    if (line == kHeartbeat)
        return;
    const auto space = line.find(' ');
    const std::string head = line.substr(0, space);
    const std::string payload = space == std::string::npos ? "" : line.substr(space + 1);
    if (head == kRefuse)
        exit_usage(std::string("the ") + peer_ + " refused the run: " + payload);
    Signal s{};
    if (!signal_from_string(head, s))
        exit_error(std::string("unexpected control line from the ") + peer_ + ": '" + line + "'");
    if (s == Signal::finished)
        finished_.store(true);
    inbox_.put(s, payload);
}

void SocketLink::reader_loop() {
    std::string buffer;
    char chunk[4096];
    auto last_beat = std::chrono::steady_clock::now();
    while (!stop_.load()) {
        pollfd pfd{sock_.fd(), POLLIN, 0};
        const int n = ::poll(&pfd, 1, kHeartbeatMs / 2);
        const auto now = std::chrono::steady_clock::now();
        if (now - last_beat >= std::chrono::milliseconds(kHeartbeatMs)) {
            write_line(kHeartbeat);
            last_beat = now;
        }
        if (n <= 0)
            continue;
        const ssize_t r = ::recv(sock_.fd(), chunk, sizeof chunk, 0);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0) {
            if (finished_.load())
                return;
            peer_gone(r == 0 ? "closed" : "failed");
        }
        buffer.append(chunk, static_cast<std::size_t>(r));
        for (auto nl = buffer.find('\n'); nl != std::string::npos; nl = buffer.find('\n')) {
            handle_line(buffer.substr(0, nl));
            buffer.erase(0, nl + 1);
        }
    }
}

std::unique_ptr<Link> open_control_link(const Options &o, Watchdog &wd) {
    Endpoint ep;
    std::string error;
    parse_endpoint(o.control, ep, error);
    if (o.role == Role::receiver)
        return SocketLink::accept(ep, o.timeout_ms, wd);
    return SocketLink::connect(ep, o.timeout_ms, wd);
}

}  // namespace bench
