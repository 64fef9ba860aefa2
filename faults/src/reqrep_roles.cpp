#include "clock.hpp"
#include "monitor.hpp"
#include "roles.hpp"
#include "sockets.hpp"
#include "wire.hpp"

#include <zmq.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace faults {
namespace {

// The client's socket and its monitor; replaced whole on every retry, as the lazy
// pirate does (a REQ socket that lost its reply cannot send again).
class ClientSocket {
public:
    explicit ClientSocket(Context &c) : c_(c) { open(); }
    ~ClientSocket() { close(); }
    void *get() const { return s_; }
    void replace() {
        close();
        open();
    }

private:
    void open() {
        s_ = make_socket(c_.zmq_ctx, c_.options);
        monitor_ =
            std::make_unique<Monitor>(c_.zmq_ctx, s_, "req-" + std::to_string(n_++), c_.events);
        attach(s_, c_.options);
    }
    void close() {
        monitor_.reset();
        // The abandoned request must not hold the process at exit: the pattern
        // drops it (zguide's lazy pirate sets linger 0 here too).
        set_int(s_, ZMQ_LINGER, 0, "ZMQ_LINGER");
        zmq_close(s_);
    }
    Context &c_;
    void *s_ = nullptr;
    std::unique_ptr<Monitor> monitor_;
    int n_ = 0;
};

bool send_until(void *s, const std::vector<std::uint8_t> &buf, std::size_t n, std::int64_t end) {
    while (mono_ns() < end) {
        if (zmq_send(s, buf.data(), n, 0) == int(n))
            return true;
        if (zmq_errno() != EAGAIN && zmq_errno() != EINTR)
            zmq_failure("zmq_send");
    }
    return false;
}

// Waits for a reply until `deadline`; logs it. false: none came.
bool await_reply(Context &c, void *s, std::int64_t deadline) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    bool got = false;
    while (!got && mono_ns() < deadline) {
        if (zmq_msg_recv(&m, s, 0) < 0) {
            if (zmq_errno() != EAGAIN && zmq_errno() != EINTR)
                zmq_failure("zmq_msg_recv");
            continue;
        }
        const Check check =
            verify(static_cast<const std::uint8_t *>(zmq_msg_data(&m)), zmq_msg_size(&m));
        // ok: the body is intact; whether it answers `seq` the reader sees from the
        // epoch and sequence logged (a stale reply is intact but not ours).
        c.records.add(Kind::reply, check.ok && !zmq_msg_more(&m), check.epoch, check.seq, mono_ns(),
                      check.sent_ns);
        got = true;
    }
    zmq_msg_close(&m);
    return got;
}

}  // namespace

std::uint64_t run_req_client(Context &c) {
    const Options &o = c.options;
    std::uint64_t issued = 0;
    ClientSocket socket(c);
    std::printf("READY\n");
    std::fflush(stdout);
    sleep_until_ns(o.start_at_ns);
    c.events.phase("sending");
    std::vector<std::uint8_t> buf(o.size_max);
    const std::int64_t period = std::int64_t(1e9 / o.rate);
    std::int64_t next = o.start_at_ns;
    for (std::uint64_t seq = 0; mono_ns() < o.send_until_ns; ++seq) {
        next = std::max(next, mono_ns() - period);
        sleep_until_ns(next);
        next += period;
        const std::size_t n = size_for(seq, o.size_min, o.size_max);
        fill(buf.data(), n, o.epoch, seq, mono_ns());
        ++issued;
        for (int attempt = 0;; ++attempt) {
            if (!send_until(socket.get(), buf, n, o.until_ns))
                break;  // the run ended first: the request counts as unanswered
            c.records.add(Kind::sent, true, o.epoch, seq, mono_ns(), attempt);
            const std::int64_t deadline =
                std::min(o.until_ns, mono_ns() + std::int64_t(o.request_timeout_ms) * 1000000);
            if (await_reply(c, socket.get(), deadline) || mono_ns() >= o.until_ns)
                break;
            c.records.add(Kind::retry, true, o.epoch, seq, mono_ns(), attempt + 1);
            socket.replace();
            if (attempt + 1 > o.retries) {
                c.records.add(Kind::gave_up, true, o.epoch, seq, mono_ns(), attempt + 1);
                break;
            }
        }
    }
    c.events.phase("draining");
    sleep_until_ns(o.until_ns);
    c.events.phase("closing");
    return issued;
}

std::uint64_t run_rep_server(Context &c) {
    const Options &o = c.options;
    void *s = make_socket(c.zmq_ctx, o);
    std::uint64_t received = 0;
    {
        Monitor monitor(c.zmq_ctx, s, "rep", c.events);
        attach(s, o);
        std::printf("BOUND %s\nREADY\n", last_endpoint(s).c_str());
        std::fflush(stdout);
        c.events.phase("receiving");
        zmq_msg_t m;
        zmq_msg_init(&m);
        while (mono_ns() < o.until_ns) {
            if (zmq_msg_recv(&m, s, 0) < 0) {
                if (zmq_errno() != EAGAIN && zmq_errno() != EINTR)
                    zmq_failure("zmq_msg_recv");
                continue;
            }
            const Check check =
                verify(static_cast<const std::uint8_t *>(zmq_msg_data(&m)), zmq_msg_size(&m));
            c.records.add(Kind::received, check.ok, check.epoch, check.seq, mono_ns(),
                          check.sent_ns);
            ++received;
            // The reply is the request itself: the client checks every byte came back.
            // A reply to a client that is gone is dropped by REP; that is not an error.
            while (zmq_msg_send(&m, s, 0) < 0 && mono_ns() < o.until_ns) {
                if (zmq_errno() != EAGAIN && zmq_errno() != EINTR)
                    zmq_failure("zmq_msg_send");
            }
        }
        zmq_msg_close(&m);
        c.events.phase("closing");
    }
    zmq_close(s);
    return received;
}

}  // namespace faults
