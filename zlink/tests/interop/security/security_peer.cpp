// Security interop peer: one zmq.h program, built against libzmq 4.3.5 and
// against zlink (never both in one process). security_interop.py pairs them.
//
//   security_peer --keygen                       prints "KEYS <public> <secret>" (Z85)
//   security_peer --role server --bind EP --mechanism null|plain|curve
//                 [--zap accept|deny|none] [--domain D] [--enforce-domain 1]
//                 [--server-secret Z85] [--allow-client Z85] [--next-secret Z85]
//   security_peer --role client --connect EP --mechanism null|plain|curve
//                 [--username U --password P] [--server-public Z85]
//                 [--client-public Z85 --client-secret Z85]
//                 --expect ok|refused [--expect-event NAME:VALUE]
//   both roles:   [--heartbeat MS] [--pattern echo|pubsub]
//
// Server: a DEALER that echoes every message until stdin says "stop" (then it
// prints every handshake monitor event as "EVENT NAME VALUE" and exits 0) or
// "rotate" (it closes, binds the same endpoint again with --next-secret and
// prints "ROTATED"). With --zap accept|deny a thread answers ZAP requests from a
// REP socket at inproc://zeromq.zap.01: accept lets in PLAIN admin/password,
// any NULL peer, and the CURVE key given by --allow-client; deny refuses all
// (400). A binder prints "ENDPOINT <endpoint>" once bound.
//
// Client: a DEALER. --expect ok: the echo script (single, multipart with an
// empty frame, empty, 256 KiB, 1 MiB, 100 numbered) must come back unchanged.
// --expect refused: a probe must not come back within 2 s, and the monitor must
// not report HANDSHAKE_SUCCEEDED; --expect-event names the event (and value)
// that must be reported instead (e.g. HANDSHAKE_FAILED_AUTH:400).
// --heartbeat MS: HEARTBEAT_IVL=MS, TIMEOUT=TTL=5*MS on both sides, and the client
// falls silent for 15*MS mid-script, so only PING/PONG (sealed, under CURVE) keep
// the connection. --pattern pubsub: the server is a PUB publishing "A..." and
// "B..." messages, the client a SUB subscribed to "A" that must get 20 "A"
// messages and never a "B" (the subscription travels sealed, under CURVE).
// Every failure exits 1 with a one-line reason on stderr. Only --keygen prints a
// secret key (throw-away test keys, for the driver).
#include <zmq.h>

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

using frames = std::vector<std::string>;

[[noreturn]] void fail(const std::string &why) {
    std::fprintf(stderr, "security_peer: FAIL: %s (errno %d: %s)\n", why.c_str(), zmq_errno(),
                 zmq_strerror(zmq_errno()));
    std::exit(1);
}

void check(int rc, const char *what) {
    if (rc != 0)
        fail(what);
}

struct args {
    std::map<std::string, std::string> v;
    std::string get(const std::string &k, const std::string &def = "") const {
        auto it = v.find(k);
        return it == v.end() ? def : it->second;
    }
};

args parse(int argc, char **argv) {
    args a;
    for (int i = 1; i < argc; ++i) {
        std::string k = argv[i];
        if (k.rfind("--", 0) != 0)
            fail("unexpected argument " + k);
        k = k.substr(2);
        if (k == "keygen") {
            a.v[k] = "1";
            continue;
        }
        if (i + 1 >= argc)
            fail("missing value for --" + k);
        a.v[k] = argv[++i];
    }
    return a;
}

void set_string(void *s, int option, const std::string &value, const char *what) {
    check(zmq_setsockopt(s, option, value.data(), value.size()), what);
}

void set_int(void *s, int option, int value, const char *what) {
    check(zmq_setsockopt(s, option, &value, sizeof value), what);
}

// ---- messages --------------------------------------------------------------

void send_frames(void *s, const frames &f) {
    for (std::size_t i = 0; i < f.size(); ++i)
        if (zmq_send(s, f[i].data(), f[i].size(), i + 1 < f.size() ? ZMQ_SNDMORE : 0) < 0)
            fail("send");
}

// Receives one whole message; false on timeout (RCVTIMEO).
bool recv_frames(void *s, frames &out) {
    out.clear();
    for (;;) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, s, 0) < 0) {
            zmq_msg_close(&m);
            if (zmq_errno() == EAGAIN && out.empty())
                return false;
            fail("recv");
        }
        out.emplace_back(static_cast<char *>(zmq_msg_data(&m)), zmq_msg_size(&m));
        const bool more = zmq_msg_more(&m);
        zmq_msg_close(&m);
        if (!more)
            return true;
    }
}

std::vector<frames> script() {
    std::vector<frames> s{{"hello"},
                          {"part-1", "", "part-3"},
                          {""},
                          {std::string(256 * 1024, 'k')},
                          {std::string(1024 * 1024, 'm')}};
    for (int i = 0; i < 100; ++i)
        s.push_back({"numbered-" + std::to_string(i)});
    return s;
}

// ---- monitor ---------------------------------------------------------------

const std::map<int, const char *> event_names = {
    {ZMQ_EVENT_HANDSHAKE_SUCCEEDED, "HANDSHAKE_SUCCEEDED"},
    {ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL, "HANDSHAKE_FAILED_NO_DETAIL"},
    {ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL, "HANDSHAKE_FAILED_PROTOCOL"},
    {ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, "HANDSHAKE_FAILED_AUTH"},
};

struct monitor {
    void *pair = nullptr;
    std::vector<std::pair<std::string, long>> seen;

    void start(void *ctx, void *sock, const std::string &name) {
        const std::string ep = "inproc://monitor-" + name;
        check(zmq_socket_monitor(
                  sock, ep.c_str(),
                  ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                      ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH),
              "zmq_socket_monitor");
        pair = zmq_socket(ctx, ZMQ_PAIR);
        set_int(pair, ZMQ_LINGER, 0, "monitor linger");
        check(zmq_connect(pair, ep.c_str()), "monitor connect");
    }

    // Reads every event already queued.
    void drain() {
        frames f;
        set_int(pair, ZMQ_RCVTIMEO, 0, "monitor rcvtimeo");
        while (recv_frames(pair, f)) {
            if (f.size() != 2 || f[0].size() < 6)
                fail("monitor event of unexpected shape");
            std::uint16_t event;
            std::uint32_t value;
            std::memcpy(&event, f[0].data(), 2);
            std::memcpy(&value, f[0].data() + 2, 4);
            auto it = event_names.find(event);
            seen.emplace_back(it == event_names.end() ? std::to_string(event) : it->second, value);
        }
    }

    bool has(const std::string &name, long value = -1) const {
        for (const auto &[n, v] : seen)
            if (n == name && (value < 0 || v == value))
                return true;
        return false;
    }

    void close() {
        if (pair)
            zmq_close(pair);
        pair = nullptr;
    }
};

// ---- security options ------------------------------------------------------

void apply_heartbeat(void *s, const args &a) {
    const int ms = std::atoi(a.get("heartbeat", "0").c_str());
    if (ms <= 0)
        return;
    set_int(s, ZMQ_HEARTBEAT_IVL, ms, "ZMQ_HEARTBEAT_IVL");
    set_int(s, ZMQ_HEARTBEAT_TIMEOUT, 5 * ms, "ZMQ_HEARTBEAT_TIMEOUT");
    set_int(s, ZMQ_HEARTBEAT_TTL, 5 * ms, "ZMQ_HEARTBEAT_TTL");
}

bool pubsub(const args &a) { return a.get("pattern", "echo") == "pubsub"; }

void apply_server_security(void *s, const args &a, const std::string &secret) {
    apply_heartbeat(s, a);
    const std::string mech = a.get("mechanism", "null");
    if (!a.get("domain").empty())
        set_string(s, ZMQ_ZAP_DOMAIN, a.get("domain"), "ZMQ_ZAP_DOMAIN");
    if (a.get("enforce-domain") == "1")
        set_int(s, 93 /* ZMQ_ZAP_ENFORCE_DOMAIN, draft in both libraries */, 1,
                "ZMQ_ZAP_ENFORCE_DOMAIN");
    if (mech == "plain")
        set_int(s, ZMQ_PLAIN_SERVER, 1, "ZMQ_PLAIN_SERVER");
    if (mech == "curve") {
        set_int(s, ZMQ_CURVE_SERVER, 1, "ZMQ_CURVE_SERVER");
        set_string(s, ZMQ_CURVE_SECRETKEY, secret, "ZMQ_CURVE_SECRETKEY (server)");
    }
}

void apply_client_security(void *s, const args &a) {
    apply_heartbeat(s, a);
    const std::string mech = a.get("mechanism", "null");
    if (mech == "plain") {
        set_string(s, ZMQ_PLAIN_USERNAME, a.get("username"), "ZMQ_PLAIN_USERNAME");
        set_string(s, ZMQ_PLAIN_PASSWORD, a.get("password"), "ZMQ_PLAIN_PASSWORD");
    } else if (mech == "curve") {
        set_string(s, ZMQ_CURVE_SERVERKEY, a.get("server-public"), "ZMQ_CURVE_SERVERKEY");
        set_string(s, ZMQ_CURVE_PUBLICKEY, a.get("client-public"), "ZMQ_CURVE_PUBLICKEY");
        set_string(s, ZMQ_CURVE_SECRETKEY, a.get("client-secret"), "ZMQ_CURVE_SECRETKEY");
    }
}

// ---- ZAP handler (RFC 27) --------------------------------------------------

struct zap_handler {
    std::string policy, allowed_key;  // policy: accept | deny
    std::atomic<bool> stop{false};
    std::atomic<bool> ready{false};
    std::thread thread;

    bool allows(const frames &req) const {
        if (policy != "accept" || req.size() < 6)
            return false;
        const std::string &mech = req[5];
        if (mech == "NULL")
            return true;
        if (mech == "PLAIN")
            return req.size() == 8 && req[6] == "admin" && req[7] == "password";
        if (mech == "CURVE" && req.size() == 7 && req[6].size() == 32) {
            char text[41];
            zmq_z85_encode(text, reinterpret_cast<const uint8_t *>(req[6].data()), 32);
            return allowed_key == text;
        }
        return false;
    }

    // req: version, request id, domain, address, identity, mechanism, credentials...
    void serve(void *ctx) {
        void *rep = zmq_socket(ctx, ZMQ_REP);
        set_int(rep, ZMQ_LINGER, 0, "zap linger");
        set_int(rep, ZMQ_RCVTIMEO, 100, "zap rcvtimeo");
        check(zmq_bind(rep, "inproc://zeromq.zap.01"), "bind inproc://zeromq.zap.01");
        ready = true;
        frames req;
        while (!stop) {
            if (!recv_frames(rep, req))
                continue;
            if (req.size() < 6 || req[0] != "1.0")
                fail("malformed ZAP request");
            const bool ok = allows(req);
            send_frames(rep, {req[0], req[1], ok ? "200" : "400", ok ? "OK" : "refused",
                              ok ? "user-" + req[5] : "", ""});
        }
        zmq_close(rep);
    }
};

// ---- roles -----------------------------------------------------------------

void *make_server(void *ctx, const args &a, const std::string &secret, const std::string &endpoint,
                  std::string &resolved) {
    void *s = zmq_socket(ctx, pubsub(a) ? ZMQ_PUB : ZMQ_DEALER);
    set_int(s, ZMQ_LINGER, 0, "linger");
    set_int(s, ZMQ_RCVTIMEO, 50, "rcvtimeo");
    apply_server_security(s, a, secret);
    check(zmq_bind(s, endpoint.c_str()), "bind");
    char buf[256];
    std::size_t len = sizeof buf;
    check(zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, buf, &len), "ZMQ_LAST_ENDPOINT");
    resolved = buf;
    return s;
}

std::string stdin_line() {
    pollfd p{0, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0)
        return "";
    char line[64] = {};
    if (!std::fgets(line, sizeof line, stdin))
        return "stop";
    std::string l(line);
    while (!l.empty() && (l.back() == '\n' || l.back() == '\r'))
        l.pop_back();
    return l;
}

int run_server(const args &a) {
    void *ctx = zmq_ctx_new();
    zap_handler zap;
    zap.policy = a.get("zap", "none");
    zap.allowed_key = a.get("allow-client");
    if (zap.policy != "none") {
        zap.thread = std::thread([&] { zap.serve(ctx); });
        while (!zap.ready)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::string endpoint;
    void *s = make_server(ctx, a, a.get("server-secret"), a.get("bind"), endpoint);
    monitor mon;
    mon.start(ctx, s, "server-0");
    std::printf("ENDPOINT %s\n", endpoint.c_str());
    std::fflush(stdout);
    frames f;
    for (int generation = 1, n = 0;; ++n) {
        if (pubsub(a)) {
            send_frames(s, {(n % 2 ? "B-" : "A-") + std::to_string(n)});
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        } else if (recv_frames(s, f)) {
            send_frames(s, f);
        }
        mon.drain();
        const std::string cmd = stdin_line();
        if (cmd == "stop")
            break;
        if (cmd == "rotate") {
            // New long-term keys on the same endpoint: old clients must fail.
            zmq_socket_monitor(s, nullptr, 0);
            mon.drain();
            const auto seen = mon.seen;
            mon.close();
            zmq_close(s);
            std::string again;
            for (int tries = 0;; ++tries) {
                void *n = zmq_socket(ctx, pubsub(a) ? ZMQ_PUB : ZMQ_DEALER);
                set_int(n, ZMQ_LINGER, 0, "linger");
                set_int(n, ZMQ_RCVTIMEO, 50, "rcvtimeo");
                apply_server_security(n, a, a.get("next-secret"));
                if (zmq_bind(n, endpoint.c_str()) == 0) {
                    s = n;
                    break;
                }
                zmq_close(n);
                if (tries > 100)
                    fail("re-bind after rotation");
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
            mon = monitor{};
            mon.seen = seen;
            mon.start(ctx, s, "server-" + std::to_string(generation++));
            std::printf("ROTATED\n");
            std::fflush(stdout);
        }
    }
    mon.drain();
    for (const auto &[name, value] : mon.seen)
        std::printf("EVENT %s %ld\n", name.c_str(), value);
    std::fflush(stdout);
    zmq_socket_monitor(s, nullptr, 0);
    mon.close();
    zmq_close(s);
    zap.stop = true;
    if (zap.thread.joinable())
        zap.thread.join();
    zmq_ctx_term(ctx);
    return 0;
}

void run_script(void *s, int heartbeat_ms) {
    frames back;
    int i = 0;
    for (const auto &msg : script()) {
        if (heartbeat_ms > 0 && i++ == 3)  // three heartbeat timeouts of silence
            std::this_thread::sleep_for(std::chrono::milliseconds(15 * heartbeat_ms));
        send_frames(s, msg);
        if (!recv_frames(s, back))
            fail("no echo within 5 s (message of " + std::to_string(msg[0].size()) + " octets)");
        if (back != msg)
            fail("echo differs from what was sent");
    }
}

// SUB: 20 "A" messages, never a "B".
void run_subscriber(void *s) {
    set_string(s, ZMQ_SUBSCRIBE, "A", "ZMQ_SUBSCRIBE");
    frames got;
    for (int i = 0; i < 20; ++i) {
        if (!recv_frames(s, got))
            fail("no published message within 5 s");
        if (got.size() != 1 || got[0].rfind("A-", 0) != 0)
            fail("received a message the subscription filters out: " + got[0]);
    }
}

int run_client(const args &a) {
    void *ctx = zmq_ctx_new();
    void *s = zmq_socket(ctx, pubsub(a) ? ZMQ_SUB : ZMQ_DEALER);
    set_int(s, ZMQ_LINGER, 0, "linger");
    apply_client_security(s, a);
    monitor mon;
    mon.start(ctx, s, "client");
    check(zmq_connect(s, a.get("connect").c_str()), "connect");
    const std::string expect = a.get("expect", "ok");
    if (expect == "ok") {
        set_int(s, ZMQ_RCVTIMEO, 5000, "rcvtimeo");
        if (pubsub(a))
            run_subscriber(s);
        else
            run_script(s, std::atoi(a.get("heartbeat", "0").c_str()));
        mon.drain();
        if (!mon.has("HANDSHAKE_SUCCEEDED"))
            fail("script ran but no HANDSHAKE_SUCCEEDED event");
        if (std::count_if(mon.seen.begin(), mon.seen.end(),
                          [](const auto &e) { return e.first == "HANDSHAKE_SUCCEEDED"; }) != 1)
            fail("the connection was made more than once (dropped and reconnected)");
        std::printf("OK %s\n", pubsub(a) ? "20 messages received" : "script echoed");
    } else {
        set_int(s, ZMQ_RCVTIMEO, 2000, "rcvtimeo");
        // Without waiting: once the refusal has ended the connection, a client
        // that gives up on the endpoint (zlink, libzmq) has no pipe left and a
        // blocking send would wait for ever; EAGAIN then is as good as a probe.
        if (zmq_send(s, "probe", 5, ZMQ_DONTWAIT) < 0 && zmq_errno() != EAGAIN)
            fail("probe send: " + std::string(zmq_strerror(zmq_errno())));
        frames back;
        if (recv_frames(s, back))
            fail("refused client got an echo");
        mon.drain();
        if (mon.has("HANDSHAKE_SUCCEEDED"))
            fail("refused client reported HANDSHAKE_SUCCEEDED");
        const std::string want = a.get("expect-event");
        if (!want.empty()) {
            const auto colon = want.find(':');
            const std::string name = want.substr(0, colon);
            const long value = colon == std::string::npos ? -1 : std::stol(want.substr(colon + 1));
            if (!mon.has(name, value)) {
                std::string got;
                for (const auto &[n, v] : mon.seen)
                    got += " " + n + ":" + std::to_string(v);
                fail("expected event " + want + ", saw:" + (got.empty() ? " none" : got));
            }
        }
        std::printf("REFUSED as expected\n");
    }
    std::fflush(stdout);
    zmq_socket_monitor(s, nullptr, 0);
    mon.close();
    zmq_close(s);
    zmq_ctx_term(ctx);
    return 0;
}

int keygen() {
    char pub[41], sec[41];
    check(zmq_curve_keypair(pub, sec), "zmq_curve_keypair");
    std::printf("KEYS %s %s\n", pub, sec);
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    const args a = parse(argc, argv);
    if (a.get("keygen") == "1")
        return keygen();
    const std::string role = a.get("role");
    if (role == "server")
        return run_server(a);
    if (role == "client")
        return run_client(a);
    fail("--role must be server or client");
}
