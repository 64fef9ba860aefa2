#include "clock.hpp"
#include "monitor.hpp"
#include "roles.hpp"
#include "sockets.hpp"
#include "wire.hpp"

#include <zmq.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

namespace faults {
namespace {

// Paced sends: the next slot is one period after the last; a sender that fell
// behind (blocked by HWM or a stalled link) starts afresh instead of bursting.
struct Pacer {
    std::int64_t period_ns, next_ns;
    Pacer(double rate, std::int64_t start) : period_ns(std::int64_t(1e9 / rate)), next_ns(start) {}
    void wait() {
        const std::int64_t now = mono_ns();
        if (next_ns < now - period_ns)
            next_ns = now;
        sleep_until_ns(next_ns);
        next_ns += period_ns;
    }
};

void log_bound(void *s, const Options &o) {
    if (o.bind)
        std::printf("BOUND %s\n", last_endpoint(s).c_str());
    std::printf("READY\n");
    std::fflush(stdout);
}

// A ROUTER's routing ids numbered 1, 2, ... in the order first seen: one per
// connection (the DEALER sets none, so each connection gets a fresh one). A handful
// per cell, so a linear search.
class ConnectionNumbers {
public:
    std::uint16_t of(zmq_msg_t &id) {
        const std::string key(static_cast<const char *>(zmq_msg_data(&id)), zmq_msg_size(&id));
        for (std::size_t i = 0; i < seen_.size(); ++i)
            if (seen_[i] == key)
                return number(i);
        seen_.push_back(key);
        return number(seen_.size() - 1);
    }

private:
    static std::uint16_t number(std::size_t i) { return std::uint16_t(i < 65534 ? i + 1 : 65535); }
    std::vector<std::string> seen_;
};

}  // namespace

std::uint64_t run_stream_sender(Context &c) {
    const Options &o = c.options;
    void *s = make_socket(c.zmq_ctx, o);
    std::uint64_t sent = 0;
    {
        Monitor monitor(c.zmq_ctx, s, "send", c.events);
        attach(s, o);
        log_bound(s, o);
        sleep_until_ns(o.start_at_ns);
        c.events.phase("sending");
        std::vector<std::uint8_t> buf(o.size_max);
        Pacer pacer(o.rate, o.start_at_ns);
        std::uint64_t seq = 0;
        bool fresh = true;  // a timed-out send is retried with the same seq
        while (mono_ns() < o.send_until_ns) {
            if (fresh)
                pacer.wait();
            const std::size_t n = size_for(seq, o.size_min, o.size_max);
            fill(buf.data(), n, o.epoch, seq, mono_ns());
            if (zmq_send(s, buf.data(), n, 0) == int(n)) {
                c.records.add(Kind::sent, true, o.epoch, seq, mono_ns(), 0);
                ++seq;
                ++sent;
                fresh = true;
            } else if (zmq_errno() == EAGAIN || zmq_errno() == EINTR) {
                fresh = false;
            } else {
                zmq_failure("zmq_send");
            }
        }
        // Stay connected until the end, so what is queued can still drain.
        c.events.phase("draining");
        sleep_until_ns(o.until_ns);
        c.events.phase("closing");
    }
    zmq_close(s);
    return sent;
}

std::uint64_t run_stream_receiver(Context &c) {
    const Options &o = c.options;
    void *s = make_socket(c.zmq_ctx, o);
    const bool router = o.pattern == Pattern::dealer_router;
    std::uint64_t received = 0;
    {
        Monitor monitor(c.zmq_ctx, s, "recv", c.events);
        attach(s, o);
        log_bound(s, o);
        c.events.phase("receiving");
        // zmq_msg_recv replaces the message's content each call: one message object
        // serves every frame; only the last frame (the body) is checked.
        zmq_msg_t m;
        zmq_msg_init(&m);
        std::size_t frames = 0;
        ConnectionNumbers connections;
        std::uint16_t conn = 0;  // a ROUTER's: the connection of the message being read
        while (mono_ns() < o.until_ns) {
            if (zmq_msg_recv(&m, s, 0) < 0) {
                if (zmq_errno() != EAGAIN && zmq_errno() != EINTR)
                    zmq_failure("zmq_msg_recv");
                continue;
            }
            ++frames;
            if (router && frames == 1)
                conn = connections.of(m);
            if (zmq_msg_more(&m))
                continue;  // the rest of this message is already here
            const std::int64_t now = mono_ns();
            Check check =
                verify(static_cast<const std::uint8_t *>(zmq_msg_data(&m)), zmq_msg_size(&m));
            // A ROUTER's message is [routing id, body]; any other shape is corrupted.
            if (frames != (router ? 2u : 1u))
                check.ok = false;
            c.records.add(Kind::received, check.ok, check.epoch, check.seq, now, check.sent_ns,
                          conn);
            ++received;
            frames = 0;
            conn = 0;
        }
        zmq_msg_close(&m);
        c.events.phase("closing");
    }
    zmq_close(s);
    return received;
}

}  // namespace faults
