#include "zmq_end.hpp"

#include <atomic>
#include <cerrno>
#include <thread>
#include <unistd.h>

#include "clock.hpp"
#include "link.hpp"
#include "process.hpp"
#include "raw_socket.hpp"
#include "report.hpp"

namespace bench {

void exit_zmq_error(const char *what) {
    exit_error(std::string(what) + ": " + zmq_strerror(zmq_errno()));
}

void set_int_option(void *s, int option, int value, const char *name) {
    if (zmq_setsockopt(s, option, &value, sizeof value) != 0)
        exit_error(std::string("the library refused ") + name + "=" + std::to_string(value) + ": " +
                   zmq_strerror(zmq_errno()));
}

void set_bytes_option(void *s, int option, std::string_view value, const char *name) {
    if (zmq_setsockopt(s, option, value.data(), value.size()) != 0)
        exit_error(std::string("the library refused ") + name + ": " + zmq_strerror(zmq_errno()));
}

const char *socket_type_name(int type) {
    switch (type) {
    case ZMQ_PAIR: return "ZMQ_PAIR";
    case ZMQ_PUB: return "ZMQ_PUB";
    case ZMQ_SUB: return "ZMQ_SUB";
    case ZMQ_REQ: return "ZMQ_REQ";
    case ZMQ_REP: return "ZMQ_REP";
    case ZMQ_DEALER: return "ZMQ_DEALER";
    case ZMQ_ROUTER: return "ZMQ_ROUTER";
    case ZMQ_PULL: return "ZMQ_PULL";
    case ZMQ_PUSH: return "ZMQ_PUSH";
    case ZMQ_STREAM: return "ZMQ_STREAM";
    }
    return "unknown socket type";
}

namespace {

// The mechanism of this process's sockets. Every socket of a bench process is made
// from the one Options, so make_socket records it for bind_endpoint/connect_to.
Security g_security = Security::null;

// Fixed CURVE keys (libzmq's published test pairs, Z85): a benchmark needs both
// processes of a two-process run to agree without exchanging anything.
constexpr const char *kServerPublic = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
constexpr const char *kServerSecret = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";
constexpr const char *kClientPublic = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";
constexpr const char *kClientSecret = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs";

void secure_as_server(void *s) {
    if (g_security != Security::curve)
        return;
    set_int_option(s, ZMQ_CURVE_SERVER, 1, "ZMQ_CURVE_SERVER");
    set_bytes_option(s, ZMQ_CURVE_SECRETKEY, kServerSecret, "ZMQ_CURVE_SECRETKEY");
}

void secure_as_client(void *s) {
    if (g_security != Security::curve)
        return;
    set_bytes_option(s, ZMQ_CURVE_SERVERKEY, kServerPublic, "ZMQ_CURVE_SERVERKEY");
    set_bytes_option(s, ZMQ_CURVE_PUBLICKEY, kClientPublic, "ZMQ_CURVE_PUBLICKEY");
    set_bytes_option(s, ZMQ_CURVE_SECRETKEY, kClientSecret, "ZMQ_CURVE_SECRETKEY");
}

}  // namespace

void *make_socket(void *ctx, int type, const Options &o) {
    g_security = o.security;
    void *s = zmq_socket(ctx, type);
    if (!s)
        exit_zmq_error((std::string("zmq_socket(") + socket_type_name(type) + ")").c_str());
    set_int_option(s, ZMQ_LINGER, o.linger, "ZMQ_LINGER");
    if (o.hwm >= 0) {  // else the library's own default
        set_int_option(s, ZMQ_SNDHWM, o.hwm, "ZMQ_SNDHWM");
        set_int_option(s, ZMQ_RCVHWM, o.hwm, "ZMQ_RCVHWM");
    }
    set_int_option(s, ZMQ_SNDTIMEO, o.timeout_ms, "ZMQ_SNDTIMEO");
    set_int_option(s, ZMQ_RCVTIMEO, o.timeout_ms, "ZMQ_RCVTIMEO");
    if (o.sndbuf != -1)
        set_int_option(s, ZMQ_SNDBUF, o.sndbuf, "ZMQ_SNDBUF");
    if (o.rcvbuf != -1)
        set_int_option(s, ZMQ_RCVBUF, o.rcvbuf, "ZMQ_RCVBUF");
    record_socket_settings(s);
    return s;
}

std::string fresh_endpoint(Transport t) {
    static std::atomic<int> counter{0};
    switch (t) {
    case Transport::tcp: return "tcp://127.0.0.1:*";
    case Transport::ipc: return "ipc://" + unique_tmp_path("ipc");
    case Transport::inproc: break;
    }
    return "inproc://bench-" + std::to_string(::getpid()) + "-" +
           std::to_string(counter.fetch_add(1));
}

std::string second_endpoint(const std::string &first, Transport t) {
    if (t != Transport::tcp)
        return fresh_endpoint(t);
    return first.substr(0, first.rfind(':')) + ":*";
}

std::string bind_endpoint(void *s, const std::string &endpoint) {
    if (endpoint.rfind("ipc://", 0) == 0)
        register_cleanup_path(endpoint.substr(6));
    secure_as_server(s);
    if (zmq_bind(s, endpoint.c_str()) != 0)
        exit_zmq_error(("zmq_bind " + endpoint).c_str());
    if (endpoint.rfind("tcp://", 0) != 0)
        return endpoint;
    char buf[256];
    std::size_t len = sizeof buf;
    if (zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, buf, &len) != 0)
        exit_zmq_error("ZMQ_LAST_ENDPOINT");
    return std::string(buf, len > 0 && buf[len - 1] == '\0' ? len - 1 : len);
}

void connect_to(void *s, const std::string &endpoint) {
    secure_as_client(s);
    if (zmq_connect(s, endpoint.c_str()) != 0)
        exit_zmq_error(("zmq_connect " + endpoint).c_str());
}

void close_socket(void *&s) {
    if (s && zmq_close(s) != 0)
        exit_zmq_error("zmq_close");
    s = nullptr;
}

ZmqEnd::ZmqEnd(ZmqEndSpec spec) : spec_(std::move(spec)) {
    zmq_msg_init(&id_);
    zmq_msg_init(&msg_);
}

ZmqEnd::~ZmqEnd() {
    zmq_msg_close(&id_);
    zmq_msg_close(&msg_);
}

static void send_or_die(void *s, const void *data, std::size_t n, int flags) {
    while (zmq_send(s, data, n, flags) < 0) {
        if (zmq_errno() == EINTR)
            continue;
        if (zmq_errno() == EAGAIN)
            exit_timeout("send blocked longer than --timeout-ms (peer stalled?)");
        exit_zmq_error("zmq_send");
    }
}

void ZmqEnd::send_routing_id_frame() {
    if (!spec_.send_routing_id)
        return;
    const std::string &id = spec_.peer_id.empty() ? learned_id_ : spec_.peer_id;
    send_or_die(spec_.send_socket, id.data(), id.size(), ZMQ_SNDMORE);
}

void ZmqEnd::send(const std::uint8_t *data, std::size_t n) {
    send_routing_id_frame();
    send_or_die(spec_.send_socket, data, n, 0);
}

void ZmqEnd::stage_payload(PayloadMaker &maker, std::uint64_t seq, bool corrupted) {
    if (spec_.send_buffers == 0)
        return End::stage_payload(maker, seq, corrupted);
    if (!ring_)  // the sending side's first payload (made before any timed window)
        ring_ =
            &SendRing::make_for_process(static_cast<std::size_t>(spec_.send_buffers), spec_.size);
    staged_slot_ = &ring_->next();
    if (corrupted)
        maker.make_corrupt_into(staged_slot_->bytes.data(), seq);
    else
        maker.make_into(staged_slot_->bytes.data(), seq);
}

// Zero copy: the library gets the ring's buffer and frees it through SendRing::release.
void ZmqEnd::send_staged() {
    if (spec_.send_buffers == 0)
        return End::send_staged();
    send_routing_id_frame();
    zmq_msg_t m;
    if (zmq_msg_init_data(&m, staged_slot_->bytes.data(), spec_.size, &SendRing::release,
                          staged_slot_) != 0)
        exit_zmq_error("zmq_msg_init_data");
    while (zmq_msg_send(&m, spec_.send_socket, 0) < 0) {
        const int err = zmq_errno();
        if (err == EINTR)
            continue;
        zmq_msg_close(&m);  // gives the buffer back
        if (err == EAGAIN)
            exit_timeout("send blocked longer than --timeout-ms (peer stalled?)");
        exit_zmq_error("zmq_msg_send (zero copy)");
    }
}

void ZmqEnd::recv_frame(zmq_msg_t *m) {
    for (;;) {
        const int flags = spec_.poll ? ZMQ_DONTWAIT : 0;
        if (zmq_msg_recv(m, spec_.recv_socket, flags) >= 0)
            return;
        const int err = zmq_errno();
        if (err == EINTR)
            continue;
        if (err != EAGAIN)
            exit_zmq_error("zmq_msg_recv");
        if (!spec_.poll)
            exit_timeout("nothing received for --timeout-ms (peer missing or stalled)");
        zmq_pollitem_t item{spec_.recv_socket, 0, ZMQ_POLLIN, 0};
        const int n = zmq_poll(&item, 1, spec_.timeout_ms);
        if (n == 0)
            exit_timeout("zmq_poll saw nothing for --timeout-ms (peer missing or stalled)");
        if (n < 0 && zmq_errno() != EINTR)
            exit_zmq_error("zmq_poll");
    }
}

void ZmqEnd::check_no_more_frames() {
    if (zmq_msg_more(&msg_))
        exit_verify("a message arrived with an unexpected extra frame");
}

View ZmqEnd::recv() {
    for (;;) {
        if (spec_.recv_routing_id) {
            recv_frame(&id_);
            if (!zmq_msg_more(&id_))
                exit_verify("a ROUTER message arrived without a body frame");
        }
        recv_frame(&msg_);
        check_no_more_frames();
        const std::size_t n = zmq_msg_size(&msg_);
        // Handshake leftovers can only precede the first data message.
        if (!data_seen_ && n == spec_.sync_len)
            continue;
        data_seen_ = true;
        return View{static_cast<const std::uint8_t *>(zmq_msg_data(&msg_)), n};
    }
}

std::optional<View> ZmqEnd::recv_within(int wait_ms) {
    zmq_pollitem_t item{spec_.recv_socket, 0, ZMQ_POLLIN, 0};
    const int n = zmq_poll(&item, 1, wait_ms);
    if (n < 0 && zmq_errno() != EINTR)
        exit_zmq_error("zmq_poll");
    if (n <= 0)
        return std::nullopt;
    return recv();
}

void ZmqEnd::send_back() {
    for (;;) {
        if (spec_.send_routing_id) {
            // The routing id of the message being answered (ROUTER) or the fixed peer.
            if (spec_.recv_routing_id) {
                if (zmq_msg_send(&id_, spec_.send_socket, ZMQ_SNDMORE) < 0)
                    break;
            } else {
                const std::string &id = spec_.peer_id.empty() ? learned_id_ : spec_.peer_id;
                send_or_die(spec_.send_socket, id.data(), id.size(), ZMQ_SNDMORE);
            }
        }
        // Zero-copy echo: the received message object is sent as is.
        if (zmq_msg_send(&msg_, spec_.send_socket, 0) < 0)
            break;
        return;
    }
    if (zmq_errno() == EAGAIN)
        exit_timeout("echo send blocked longer than --timeout-ms");
    exit_zmq_error("zmq_msg_send (echo)");
}

bool ZmqEnd::try_send_sync() {
    std::string sync(spec_.sync_len, 's');
    if (spec_.send_routing_id) {
        const std::string &id = spec_.peer_id.empty() ? learned_id_ : spec_.peer_id;
        if (id.empty())
            return false;  // ROUTER that has not heard from its peer yet
        if (zmq_send(spec_.send_socket, id.data(), id.size(), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
            if (zmq_errno() == EHOSTUNREACH || zmq_errno() == EAGAIN)
                return false;
            exit_zmq_error("zmq_send (handshake routing id)");
        }
    }
    if (zmq_send(spec_.send_socket, sync.data(), sync.size(), ZMQ_DONTWAIT) < 0) {
        if (zmq_errno() == EAGAIN)
            return false;
        exit_zmq_error("zmq_send (handshake)");
    }
    return true;
}

bool ZmqEnd::try_recv_sync(int wait_ms) {
    zmq_pollitem_t item{spec_.recv_socket, 0, ZMQ_POLLIN, 0};
    const int n = zmq_poll(&item, 1, wait_ms);
    if (n < 0 && zmq_errno() != EINTR)
        exit_zmq_error("zmq_poll (handshake)");
    if (n <= 0)
        return false;
    if (spec_.recv_routing_id) {
        if (zmq_msg_recv(&id_, spec_.recv_socket, ZMQ_DONTWAIT) < 0)
            return false;
        learned_id_.assign(static_cast<const char *>(zmq_msg_data(&id_)), zmq_msg_size(&id_));
    }
    if (zmq_msg_recv(&msg_, spec_.recv_socket, ZMQ_DONTWAIT) < 0)
        exit_zmq_error("zmq_msg_recv (handshake)");
    check_no_more_frames();
    if (zmq_msg_size(&msg_) != spec_.sync_len)
        exit_verify("a data message arrived during the handshake");
    return true;
}

// The side that sends handshake messages repeats them (PUB drops and ROUTER refuses
// until the peer is known) until the other side says one arrived; REQ/REP send
// exactly one (their state machines allow no more).
void ZmqEnd::send_sync_until_heard(Link &link, int timeout_ms, const char *direction) {
    const Signal heard = direction[0] == 'a' ? Signal::b_got_sync : Signal::a_got_sync;
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    bool sent_once = false;
    for (;;) {
        const bool sent = (spec_.lockstep && sent_once) ? false : try_send_sync();
        sent_once = sent_once || sent;
        if (link.poll(heard, sent ? 5 : 1))
            return;
        if (Clock::now() > deadline)
            exit_timeout(std::string("handshake ") + direction +
                         " got no answer within --timeout-ms (no peer?)");
    }
}

void ZmqEnd::recv_sync_and_tell(Link &link, int timeout_ms, const char *direction) {
    const Signal got = direction[0] == 'a' ? Signal::b_got_sync : Signal::a_got_sync;
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (!try_recv_sync(5))
        if (Clock::now() > deadline)
            exit_timeout(std::string("handshake ") + direction +
                         ": nothing arrived within --timeout-ms (no peer?)");
    link.post(got, "");
}

void ZmqEnd::establish(Link &link, bool sending_side, int timeout_ms) {
    if (sending_side) {
        send_sync_until_heard(link, timeout_ms, "a->b");
        recv_sync_and_tell(link, timeout_ms, "b->a");
    } else {
        recv_sync_and_tell(link, timeout_ms, "a->b");
        send_sync_until_heard(link, timeout_ms, "b->a");
    }
}

Side make_zmq_side(ZmqEndSpec spec, std::vector<void *> sockets, std::vector<std::string> bound,
                   const Options &o) {
    spec.timeout_ms = o.timeout_ms;
    spec.sync_len = sync_len_for(o.size);
    spec.send_buffers = o.send_buffers;
    spec.size = o.size;
    Side side;
    side.end = std::make_unique<ZmqEnd>(std::move(spec));
    side.sockets = std::move(sockets);
    side.bound = std::move(bound);
    return side;
}

}  // namespace bench
