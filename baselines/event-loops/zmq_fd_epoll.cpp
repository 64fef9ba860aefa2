// ZMQ_FD / ZMQ_EVENTS under epoll: the contract C pollers, libuv, gevent and
// pyzmq's asyncio/tornado integrations are built on, checked against whichever
// libzmq.so.5 this program is linked with (the testbed builds this one source
// against libzmq 4.3.5 and against zlink; libzmq's answers are the oracle).
//
// The contract, as libzmq 4.3.5 implements it:
//   - ZMQ_FD is readable when the socket has commands waiting (a message arrived
//     on an empty pipe, a full pipe got credit back, a bind/connect finished),
//     not when messages are waiting: it is an edge, not a level;
//   - reading ZMQ_EVENTS (or any send/recv) processes those commands, makes the
//     fd unreadable again and re-arms it for the next edge;
//   - so a loop waits on the fd only after ZMQ_EVENTS said "nothing for me",
//     and an idle socket never keeps the fd readable (no busy wake-ups).
// The epoll set is level-triggered, as asyncio's add_reader, tornado and libev
// use it: a fd that stays readable after ZMQ_EVENTS shows up as wake-ups.
//
// Output, one line per case and transport:
//   case<TAB>transport<TAB>ok|FAIL: why<TAB>wakeups=N spurious=N seconds=S
// plus `mapped<TAB>path` (which libzmq.so.5 this process really runs on).
// A wake-up is spurious when ZMQ_EVENTS shows nothing the loop waits for; libzmq
// itself has some (a credit command while nothing is blocked), so the testbed
// compares the counts with libzmq's instead of asserting a number.
#include <zmq.h>

#include <sys/epoll.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

struct outcome {
    std::string failure;  // empty: the case held
    int wakeups = 0;
    int spurious = 0;
};

int fd_of(void *s) {
    int fd = -1;
    size_t len = sizeof fd;
    zmq_getsockopt(s, ZMQ_FD, &fd, &len);
    return fd;
}

int events_of(void *s) {
    int ev = 0;
    size_t len = sizeof ev;
    zmq_getsockopt(s, ZMQ_EVENTS, &ev, &len);
    return ev;
}

long ms_since(clock_type::time_point t) {
    return static_cast<long>(
        std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - t).count());
}

// A level-triggered epoll set over the ZMQ_FDs of some sockets.
class poller {
public:
    poller() : ep_(epoll_create1(EPOLL_CLOEXEC)) {}
    ~poller() { close(ep_); }
    void add(void *s) {
        epoll_event e{};
        e.events = EPOLLIN;
        e.data.ptr = s;
        epoll_ctl(ep_, EPOLL_CTL_ADD, fd_of(s), &e);
    }
    // The sockets whose fd is readable within timeout_ms (none on timeout).
    std::vector<void *> wait(int timeout_ms) {
        epoll_event got[8];
        int n = epoll_wait(ep_, got, 8, timeout_ms);
        std::vector<void *> out;
        for (int i = 0; i < n; ++i)
            out.push_back(got[i].data.ptr);
        return out;
    }

private:
    int ep_;
};

// Waits on `s`'s fd until ZMQ_EVENTS shows `want` (checked only after a wake-up:
// a library that never raises the fd must fail here even when the event is there).
bool await_event(poller &p, void *s, int want, int limit_ms, outcome &o) {
    auto start = clock_type::now();
    for (long left = limit_ms; left > 0; left = limit_ms - ms_since(start)) {
        if (p.wait(static_cast<int>(left)).empty())
            continue;
        ++o.wakeups;
        if (events_of(s) & want)
            return true;
        ++o.spurious;
    }
    if (events_of(s) & want)
        o.failure = "ZMQ_EVENTS shows the event but ZMQ_FD never became readable within " +
                    std::to_string(limit_ms) + " ms";
    else
        o.failure = "no event within " + std::to_string(limit_ms) + " ms";
    return false;
}

// After reading ZMQ_EVENTS the fd must stay quiet while nothing happens; every
// wake-up in `ms` is counted as spurious (a stuck fd gives thousands).
void count_idle_wakeups(poller &p, void *s, int ms, outcome &o) {
    events_of(s);
    auto start = clock_type::now();
    for (long left = ms; left > 0; left = ms - ms_since(start)) {
        if (p.wait(static_cast<int>(left)).empty())
            continue;
        ++o.wakeups;
        ++o.spurious;
        events_of(s);
    }
}

// Reads ZMQ_EVENTS until the fd stays quiet for 100 ms: what a loop does before
// it measures anything (connection set-up raises the fd a few times).
bool settle(poller &p, void *s, outcome &o) {
    auto start = clock_type::now();
    while (ms_since(start) < 3000) {
        events_of(s);
        if (p.wait(100).empty())
            return true;
    }
    o.failure = "ZMQ_FD stays readable after ZMQ_EVENTS for 3 s (busy loop)";
    return false;
}

struct pair_of_sockets {
    void *push = nullptr, *pull = nullptr;
    std::string endpoint;
};

std::string endpoint_for(const std::string &transport, int n) {
    if (transport == "tcp")
        return "tcp://127.0.0.1:*";
    if (transport == "ipc")
        return "ipc:///tmp/zmq_fd_epoll_" + std::to_string(getpid()) + "_" + std::to_string(n);
    return "inproc://zmq_fd_epoll_" + std::to_string(n);
}

// PULL binds, PUSH connects; options first (HWMs apply per pipe at connect).
pair_of_sockets make_pair(void *ctx, const std::string &transport, int hwm = 1000) {
    static int count = 0;
    pair_of_sockets s;
    s.push = zmq_socket(ctx, ZMQ_PUSH);
    s.pull = zmq_socket(ctx, ZMQ_PULL);
    zmq_setsockopt(s.push, ZMQ_SNDHWM, &hwm, sizeof hwm);
    zmq_setsockopt(s.pull, ZMQ_RCVHWM, &hwm, sizeof hwm);
    int linger = 0;
    zmq_setsockopt(s.push, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(s.pull, ZMQ_LINGER, &linger, sizeof linger);
    zmq_bind(s.pull, endpoint_for(transport, ++count).c_str());
    char ep[256];
    size_t len = sizeof ep;
    zmq_getsockopt(s.pull, ZMQ_LAST_ENDPOINT, ep, &len);
    s.endpoint = ep;
    zmq_connect(s.push, ep);
    return s;
}

void close_pair(pair_of_sockets &s) {
    zmq_close(s.push);
    zmq_close(s.pull);
}

// Rounds of: send one message; the PULL's poller wakes and ZMQ_EVENTS shows it;
// recv; ZMQ_EVENTS re-arms and the fd stays quiet until the next message.
outcome arrival_and_rearm(void *ctx, const std::string &transport) {
    outcome o;
    auto s = make_pair(ctx, transport);
    poller p;
    p.add(s.pull);
    for (int round = 0; round < 10 && o.failure.empty(); ++round) {
        if (!settle(p, s.pull, o))
            break;
        zmq_send(s.push, "msg", 3, 0);
        if (!await_event(p, s.pull, ZMQ_POLLIN, 2000, o)) {
            o.failure = "round " + std::to_string(round) + ": " + o.failure;
            break;
        }
        char buf[8];
        if (zmq_recv(s.pull, buf, sizeof buf, ZMQ_DONTWAIT) != 3)
            o.failure = "POLLIN shown but recv failed";
        else if (events_of(s.pull) & ZMQ_POLLIN)
            o.failure = "POLLIN still shown after the only message was read";
        else
            count_idle_wakeups(p, s.pull, 50, o);
    }
    close_pair(s);
    return o;
}

// A multipart message wakes the reader once it is complete, never before, and
// arrives whole (RCVMORE on every part but the last).
outcome multipart(void *ctx, const std::string &transport) {
    outcome o;
    auto s = make_pair(ctx, transport);
    poller p;
    p.add(s.pull);
    if (settle(p, s.pull, o)) {
        zmq_send(s.push, "one", 3, ZMQ_SNDMORE);
        for (auto start = clock_type::now(); ms_since(start) < 200;) {
            if (p.wait(50).empty())
                continue;
            ++o.wakeups;
            ++o.spurious;
            if (events_of(s.pull) & ZMQ_POLLIN)
                o.failure = "POLLIN shown while only the first part was sent";
        }
        zmq_send(s.push, "two", 3, ZMQ_SNDMORE);
        zmq_send(s.push, "three", 5, 0);
        if (o.failure.empty() && await_event(p, s.pull, ZMQ_POLLIN, 2000, o)) {
            const char *want[] = {"one", "two", "three"};
            for (int i = 0; i < 3 && o.failure.empty(); ++i) {
                char buf[8] = {};
                int more = -1;
                size_t len = sizeof more;
                int n = zmq_recv(s.pull, buf, sizeof buf - 1, ZMQ_DONTWAIT);
                zmq_getsockopt(s.pull, ZMQ_RCVMORE, &more, &len);
                if (n < 0 || std::strcmp(buf, want[i]) != 0 || more != (i < 2))
                    o.failure = "part " + std::to_string(i) + " wrong: '" + buf +
                                "' more=" + std::to_string(more);
            }
            if (o.failure.empty())
                count_idle_wakeups(p, s.pull, 100, o);
        }
    }
    close_pair(s);
    return o;
}

// A PUSH at its HWM shows no POLLOUT; when the peer reads, the credit that comes
// back raises the PUSH's fd and ZMQ_EVENTS shows POLLOUT again.
outcome pollout_credit(void *ctx, const std::string &transport) {
    outcome o;
    auto s = make_pair(ctx, transport, 4);
    // Large messages over the network transports fill the kernel buffers quickly.
    const size_t size = transport == "inproc" ? 8 : 128 * 1024;
    std::vector<char> body(size, 'x');
    // Over tcp and ipc the sender's IO thread drains its pipe into the kernel's
    // buffers for a while after the first EAGAIN, returning credit (POLLOUT) on
    // both libraries: fill until the PUSH stays blocked.
    int sent = 0;
    bool blocked = false;
    for (int tries = 0; tries < 50 && !blocked; ++tries) {
        while (sent < 100000 && zmq_send(s.push, body.data(), size, ZMQ_DONTWAIT) >= 0)
            ++sent;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        blocked = !(events_of(s.push) & ZMQ_POLLOUT);
    }
    poller p;
    p.add(s.push);
    if (!blocked || sent == 0) {
        o.failure = "the PUSH never stayed at its HWM (sent " + std::to_string(sent) + ")";
    } else {
        std::thread reader([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            int timeout = 5000;
            zmq_setsockopt(s.pull, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
            for (int i = 0; i < sent; ++i)
                if (zmq_recv(s.pull, body.data(), 0, 0) < 0)
                    break;
        });
        await_event(p, s.push, ZMQ_POLLOUT, 5000, o);
        reader.join();
    }
    close_pair(s);
    return o;
}

// A fresh socket's fd turns readable after bind and after connect (libzmq's
// own/plug commands): pollers that register a socket right after connecting
// rely on a first wake-up.
outcome bind_and_connect(void *ctx, const std::string &transport) {
    outcome o;
    void *pull = zmq_socket(ctx, ZMQ_PULL), *push = zmq_socket(ctx, ZMQ_PUSH);
    int linger = 0;
    zmq_setsockopt(pull, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(push, ZMQ_LINGER, &linger, sizeof linger);
    poller pp, ps;
    pp.add(pull);
    ps.add(push);
    if (settle(pp, pull, o) && settle(ps, push, o)) {
        zmq_bind(pull, endpoint_for(transport, 1000).c_str());
        if (pp.wait(1000).empty())
            o.failure = "no wake-up after bind";
        else
            ++o.wakeups;
        char ep[256];
        size_t len = sizeof ep;
        zmq_getsockopt(pull, ZMQ_LAST_ENDPOINT, ep, &len);
        zmq_connect(push, ep);
        if (ps.wait(1000).empty())
            o.failure += std::string(o.failure.empty() ? "" : "; ") + "no wake-up after connect";
        else
            ++o.wakeups;
    }
    zmq_close(push);
    zmq_close(pull);
    return o;
}

// An event loop in one thread over both ends, as an application runs it: send
// while POLLOUT, read while POLLIN, wait on both fds when neither; small HWMs
// make the sender block and resume many times. Every message must arrive; a
// wake-up after which neither socket could do anything is spurious.
outcome event_loop(void *ctx, const std::string &transport) {
    outcome o;
    auto s = make_pair(ctx, transport, 10);
    poller p;
    p.add(s.push);
    p.add(s.pull);
    const int total = 5000;
    int sent = 0, received = 0;
    char buf[100] = {};
    auto start = clock_type::now();
    while (received < total && ms_since(start) < 20000) {
        bool progress = false;
        while (sent < total && (events_of(s.push) & ZMQ_POLLOUT) &&
               zmq_send(s.push, buf, sizeof buf, ZMQ_DONTWAIT) >= 0) {
            ++sent;
            progress = true;
        }
        while ((events_of(s.pull) & ZMQ_POLLIN) &&
               zmq_recv(s.pull, buf, sizeof buf, ZMQ_DONTWAIT) >= 0) {
            ++received;
            progress = true;
        }
        if (progress || received == total)
            continue;
        auto fired = p.wait(1000);
        if (fired.empty())
            continue;  // no wake-up: the deadline check decides
        ++o.wakeups;
        // ZMQ_EVENTS of every socket whose fd fired (that is what re-arms it), even
        // the PUSH's once all is sent: a credit then wakes the loop for nothing.
        int in = 0, out = 0;
        for (void *socket : fired) {
            int ev = events_of(socket);
            in |= socket == s.pull ? ev & ZMQ_POLLIN : 0;
            out |= socket == s.push && sent < total ? ev & ZMQ_POLLOUT : 0;
        }
        if (!in && !out)
            ++o.spurious;
    }
    if (received != total)
        o.failure = "stalled: sent " + std::to_string(sent) + ", received " +
                    std::to_string(received) + " of " + std::to_string(total) + " in 20 s";
    close_pair(s);
    return o;
}

std::string mapped_libzmq() {
    std::ifstream maps("/proc/self/maps");
    std::set<std::string> found;
    for (std::string line; std::getline(maps, line);) {
        auto slash = line.find('/');
        if (slash != std::string::npos && line.find("/libzmq.so.5") != std::string::npos)
            found.insert(line.substr(slash));
    }
    std::string out;
    for (auto &f : found)
        out += (out.empty() ? "" : ",") + f;
    return out;
}

}  // namespace

int main() {
    std::printf("mapped\t%s\n", mapped_libzmq().c_str());
    void *ctx = zmq_ctx_new();
    struct named {
        const char *name;
        std::function<outcome(void *, const std::string &)> run;
        std::vector<std::string> transports;
    };
    const std::vector<std::string> all = {"tcp", "ipc", "inproc"};
    const named cases[] = {
        {"arrival_and_rearm", arrival_and_rearm, all},
        {"multipart", multipart, all},
        {"pollout_credit", pollout_credit, all},
        // libzmq raises the fd for bind/connect on the network transports only.
        {"bind_and_connect", bind_and_connect, {"tcp", "ipc"}},
        {"event_loop", event_loop, all},
    };
    for (const auto &c : cases)
        for (const auto &transport : c.transports) {
            auto start = clock_type::now();
            outcome o = c.run(ctx, transport);
            std::printf("%s\t%s\t%s\twakeups=%d spurious=%d seconds=%.1f\n", c.name,
                        transport.c_str(),
                        o.failure.empty() ? "ok" : ("FAIL: " + o.failure).c_str(), o.wakeups,
                        o.spurious, static_cast<double>(ms_since(start)) / 1000);
            std::fflush(stdout);
        }
    zmq_ctx_term(ctx);
    return 0;
}
