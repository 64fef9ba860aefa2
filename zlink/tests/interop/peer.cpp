// Interop peer: one source, compiled once against libzmq 4.3.5 and once against
// zlink (never both in one process: the two export the same symbols). The driver
// (run_interop.py) starts two peers - one per library - and checks both exit 0.
//
//   interop_peer --role ROLE --type TYPE (--bind ENDPOINT | --connect ENDPOINT)
//                [--id ID] [--peer-id ID] [--count N] [--maxmsgsize N] [--heartbeat MS]
//                [--envelope 1]
//
// --heartbeat MS sets HEARTBEAT_IVL=MS, HEARTBEAT_TIMEOUT=HEARTBEAT_TTL=5*MS and
// makes the initiator fall silent for 15*MS mid-script: three heartbeat timeouts
// with no other traffic, so a peer that does not answer PING (or mis-parses it)
// gets disconnected, and the PAIR script then loses messages and fails.
//
// Roles (each verifies what it receives and exits 1 with a one-line reason):
//   initiator   PAIR/DEALER/ROUTER/REQ: sends a fixed script of messages (single,
//               multipart with an empty frame, empty, 1 MiB, numbered) and expects
//               each one echoed back unchanged. ROUTER addresses --peer-id. With
//               --envelope 1 (a DEALER talking to a REP) each message is sent
//               behind an empty delimiter frame, which the echo must carry back.
//   echo        PAIR/DEALER/ROUTER/REP: echoes --count messages back (0 = until a
//               line arrives on stdin).
//   pusher      PUSH: sends the same script (nothing comes back), then waits for a
//               line on stdin.
//   puller      PULL: receives the script and checks every message in order.
//   publisher   PUB/XPUB: publishes "B..." (must be filtered out) and "A..."
//               messages until stdin has a line; XPUB also checks it received the
//               subscription (\x01A) and, before exit, the cancellation (\x00A).
//   subscriber  SUB/XSUB: subscribes to "A", receives a single, a multipart and a
//               1 MiB message, refuses anything not starting with "A", cancels.
//   stream-server / stream-client: STREAM socket against a raw TCP peer run by the
//               driver (connect notification, data both ways, disconnect).
// A binder prints "ENDPOINT <resolved endpoint>" on stdout once bound.
#include <zmq.h>

#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using frames = std::vector<std::string>;
using clock_type = std::chrono::steady_clock;

struct args {
    std::string role, type, bind, connect, id, peer_id;
    long count = 0;
    long long maxmsgsize = -1;
    int heartbeat_ms = 0;
    bool envelope = false;
};

[[noreturn]] void fail(const std::string &why) {
    std::fprintf(stderr, "interop_peer: FAIL: %s (zmq_errno %d: %s)\n", why.c_str(), zmq_errno(),
                 zmq_strerror(zmq_errno()));
    std::exit(1);
}

void check(bool ok, const std::string &why) {
    if (!ok)
        fail(why);
}

int type_of(const std::string &t) {
    if (t == "PAIR")
        return ZMQ_PAIR;
    if (t == "PUB")
        return ZMQ_PUB;
    if (t == "SUB")
        return ZMQ_SUB;
    if (t == "XPUB")
        return ZMQ_XPUB;
    if (t == "XSUB")
        return ZMQ_XSUB;
    if (t == "DEALER")
        return ZMQ_DEALER;
    if (t == "ROUTER")
        return ZMQ_ROUTER;
    if (t == "STREAM")
        return ZMQ_STREAM;
    if (t == "REQ")
        return ZMQ_REQ;
    if (t == "REP")
        return ZMQ_REP;
    if (t == "PUSH")
        return ZMQ_PUSH;
    if (t == "PULL")
        return ZMQ_PULL;
    fail("unknown --type '" + t +
         "'; allowed: PAIR PUB SUB XPUB XSUB DEALER ROUTER STREAM REQ REP PUSH PULL");
}

bool stdin_has_line() {
    pollfd p{0, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0)
        return false;
    char buf[256];
    (void)::read(0, buf, sizeof buf);  // a line or EOF: either means stop
    return true;
}

std::string big_payload(char lead) {
    std::string s(1 << 20, '\0');
    for (std::size_t i = 0; i < s.size(); ++i)
        s[i] = static_cast<char>('a' + (i * 31) % 26);
    s[0] = lead;
    return s;
}

void send_frames(void *s, const frames &f, int flags = 0) {
    for (std::size_t i = 0; i < f.size(); ++i) {
        const int more = i + 1 < f.size() ? ZMQ_SNDMORE : 0;
        const int rc = zmq_send(s, f[i].data(), f[i].size(), more | flags);
        check(rc == static_cast<int>(f[i].size()), "send of frame " + std::to_string(i));
    }
}

// Receives one whole message; false on timeout (RCVTIMEO).
bool recv_frames(void *s, frames &out) {
    out.clear();
    for (;;) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, s, 0) < 0) {
            zmq_msg_close(&m);
            check(out.empty() && zmq_errno() == EAGAIN, "recv failed mid-message");
            return false;
        }
        out.emplace_back(static_cast<const char *>(zmq_msg_data(&m)), zmq_msg_size(&m));
        const bool more = zmq_msg_more(&m);
        zmq_msg_close(&m);
        if (!more)
            return true;
    }
}

std::string describe(const frames &f) {
    std::string d = std::to_string(f.size()) + " frame(s):";
    for (const auto &x : f)
        d += " [" + std::to_string(x.size()) + "B " + x.substr(0, 12) + "]";
    return d;
}

frames script_message(long i) {
    switch (i) {
    case 0: return {"hello"};
    case 1: return {"multi", "part", "", "end"};
    case 2: return {""};
    case 3: return {big_payload('X')};
    default: return {"msg-" + std::to_string(i)};
    }
}
constexpr long script_length = 104;

void run_initiator(void *s, const args &a, int type) {
    if (type == ZMQ_ROUTER) {
        const int one = 1;
        zmq_setsockopt(s, ZMQ_ROUTER_MANDATORY, &one, sizeof one);
    }
    for (long i = 0; i < script_length; ++i) {
        frames msg = script_message(i);
        if (type == ZMQ_ROUTER) {
            // The route exists only after the handshake: retry while EHOSTUNREACH.
            const auto deadline = clock_type::now() + std::chrono::seconds(10);
            for (;;) {
                if (zmq_send(s, a.peer_id.data(), a.peer_id.size(), ZMQ_SNDMORE) >= 0)
                    break;
                check(zmq_errno() == EHOSTUNREACH, "ROUTER send of routing id");
                check(clock_type::now() < deadline,
                      "peer '" + a.peer_id + "' never became routable");
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
        }
        // A quiet spell of 15 heartbeat intervals: only PING/PONG keep the connection
        // alive then (libzmq counts any traffic as a sign of life).
        if (a.heartbeat_ms > 0 && i == 50)
            std::this_thread::sleep_for(std::chrono::milliseconds(15 * a.heartbeat_ms));
        if (a.envelope)
            check(zmq_send(s, "", 0, ZMQ_SNDMORE) == 0, "send of the delimiter");
        send_frames(s, msg);
        frames got;
        check(recv_frames(s, got), "no echo for message " + std::to_string(i));
        if (type == ZMQ_ROUTER) {
            check(!got.empty() && got[0] == a.peer_id, "echo from unexpected routing id");
            got.erase(got.begin());
        }
        if (a.envelope) {
            check(!got.empty() && got[0].empty(), "echo without its delimiter: " + describe(got));
            got.erase(got.begin());
        }
        check(got == msg, "echo of message " + std::to_string(i) + " differs: got " +
                              describe(got) + ", sent " + describe(msg));
    }
}

void run_echo(void *s, const args &a) {
    long echoed = 0;
    while (a.count == 0 || echoed < a.count) {
        if (a.count == 0 && stdin_has_line())
            return;
        frames got;
        if (!recv_frames(s, got)) {
            check(a.count == 0, "timed out after echoing " + std::to_string(echoed) + " of " +
                                    std::to_string(a.count));
            continue;
        }
        send_frames(s, got);
        ++echoed;
    }
}

// Stays connected until told to stop (the driver waits for the puller first):
// what is checked here is the pipeline, not delivery at close under LINGER.
void run_pusher(void *s) {
    for (long i = 0; i < script_length; ++i)
        send_frames(s, script_message(i));
    const auto deadline = clock_type::now() + std::chrono::seconds(30);
    while (!stdin_has_line()) {
        check(clock_type::now() < deadline, "pusher was never told to stop");
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

void run_puller(void *s) {
    for (long i = 0; i < script_length; ++i) {
        frames got;
        check(recv_frames(s, got), "message " + std::to_string(i) + " never arrived");
        const frames want = script_message(i);
        check(got == want, "message " + std::to_string(i) + " differs: got " + describe(got) +
                               ", sent " + describe(want));
    }
}

void run_publisher(void *s, int type) {
    const std::string big = big_payload('A');
    bool saw_subscribe = false, saw_cancel = false;
    auto drain_subscriptions = [&] {
        frames f;
        while (type == ZMQ_XPUB && recv_frames(s, f)) {
            check(f.size() == 1, "XPUB got a multipart subscription message");
            if (f[0] == std::string("\x01"
                                    "A",
                                    2))
                saw_subscribe = true;
            else if (f[0] == std::string("\x00"
                                         "A",
                                         2))
                saw_cancel = true;
            else
                fail("XPUB got unexpected upstream message " + describe(f));
        }
    };
    const auto deadline = clock_type::now() + std::chrono::seconds(30);
    for (long round = 0; !stdin_has_line(); ++round) {
        check(clock_type::now() < deadline, "publisher was never told to stop");
        send_frames(s, {"B-filtered-" + std::to_string(round)});
        send_frames(s, {"A-single"});
        send_frames(s, {"A-multi", "", "end"});
        if (round % 10 == 0)
            send_frames(s, {big});
        drain_subscriptions();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (type == ZMQ_XPUB) {
        const auto until = clock_type::now() + std::chrono::seconds(5);
        while (!(saw_subscribe && saw_cancel) && clock_type::now() < until)
            drain_subscriptions();
        check(saw_subscribe, "XPUB never received the subscription \\x01A");
        check(saw_cancel, "XPUB never received the cancellation \\x00A");
    }
}

void run_subscriber(void *s, int type) {
    if (type == ZMQ_SUB)
        check(zmq_setsockopt(s, ZMQ_SUBSCRIBE, "A", 1) == 0, "ZMQ_SUBSCRIBE");
    else
        send_frames(s, {std::string("\x01"
                                    "A",
                                    2)});
    const std::string big = big_payload('A');
    bool single = false, multi = false, large = false;
    const auto deadline = clock_type::now() + std::chrono::seconds(15);
    while (!(single && multi && large)) {
        check(clock_type::now() < deadline, "subscriber did not receive all kinds in time");
        frames f;
        if (!recv_frames(s, f))
            continue;
        check(!f.empty() && !f[0].empty() && f[0][0] == 'A',
              "received a message outside the subscription: " + describe(f));
        if (f == frames{"A-single"})
            single = true;
        else if (f == frames{"A-multi", "", "end"})
            multi = true;
        else if (f == frames{big})
            large = true;
        else
            fail("unexpected message " + describe(f));
    }
    if (type == ZMQ_SUB)
        check(zmq_setsockopt(s, ZMQ_UNSUBSCRIBE, "A", 1) == 0, "ZMQ_UNSUBSCRIBE");
    else
        send_frames(s, {std::string("\x00"
                                    "A",
                                    2)});
    // Give the cancellation time to leave before the socket closes.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
}

void run_stream_server(void *s) {
    frames f;
    check(recv_frames(s, f) && f.size() == 2 && f[1].empty(), "no connect notification");
    const std::string id = f[0];
    std::string data;
    // Raw TCP may split "hello\n" across reads: accumulate until the newline.
    while (data.find('\n') == std::string::npos) {
        check(recv_frames(s, f) && f.size() == 2 && f[0] == id, "no data from raw peer");
        check(!f[1].empty(), "raw peer disconnected early");
        data += f[1];
    }
    check(data == "hello\n", "raw peer sent '" + data + "'");
    send_frames(s, {id, "world\n"});
    check(recv_frames(s, f) && f.size() == 2 && f[0] == id && f[1].empty(),
          "no disconnect notification");
}

void run_stream_client(void *s) {
    frames f;
    check(recv_frames(s, f) && f.size() == 2 && f[1].empty(), "no connect notification");
    const std::string id = f[0];
    send_frames(s, {id, "ping\n"});
    std::string data;
    while (data.find('\n') == std::string::npos) {
        check(recv_frames(s, f) && f.size() == 2 && f[0] == id && !f[1].empty(), "no reply");
        data += f[1];
    }
    check(data == "pong\n", "raw server sent '" + data + "'");
}

args parse(int argc, char **argv) {
    args a;
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        check(i + 1 < argc, "option " + k + " needs a value");
        const std::string v = argv[++i];
        if (k == "--role")
            a.role = v;
        else if (k == "--type")
            a.type = v;
        else if (k == "--bind")
            a.bind = v;
        else if (k == "--connect")
            a.connect = v;
        else if (k == "--id")
            a.id = v;
        else if (k == "--peer-id")
            a.peer_id = v;
        else if (k == "--count")
            a.count = std::stol(v);
        else if (k == "--maxmsgsize")
            a.maxmsgsize = std::stoll(v);
        else if (k == "--heartbeat")
            a.heartbeat_ms = std::stoi(v);
        else if (k == "--envelope")
            a.envelope = v == "1";
        else if (k == "--zmtp") {
        }  // zlink and libzmq always announce 3.1; codec_peer can play 3.0
        else
            fail("unknown option " + k);
    }
    check(!a.role.empty() && !a.type.empty(), "--role and --type are required");
    check(a.bind.empty() != a.connect.empty(), "exactly one of --bind/--connect is required");
    return a;
}

}  // namespace

int main(int argc, char **argv) {
    const args a = parse(argc, argv);
    const int type = type_of(a.type);
    void *ctx = zmq_ctx_new();
    void *s = zmq_socket(ctx, type);
    check(s != nullptr, "zmq_socket");
    const int timeout = 5000, linger = 2000;
    zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    zmq_setsockopt(s, ZMQ_SNDTIMEO, &timeout, sizeof timeout);
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    if (!a.id.empty())
        check(zmq_setsockopt(s, ZMQ_ROUTING_ID, a.id.data(), a.id.size()) == 0, "ZMQ_ROUTING_ID");
    if (a.heartbeat_ms > 0) {
        const int ivl = a.heartbeat_ms, timeout = 5 * a.heartbeat_ms;
        zmq_setsockopt(s, ZMQ_HEARTBEAT_IVL, &ivl, sizeof ivl);
        zmq_setsockopt(s, ZMQ_HEARTBEAT_TIMEOUT, &timeout, sizeof timeout);
        zmq_setsockopt(s, ZMQ_HEARTBEAT_TTL, &timeout, sizeof timeout);
    }
    if (a.maxmsgsize >= 0)
        check(zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &a.maxmsgsize, sizeof a.maxmsgsize) == 0,
              "ZMQ_MAXMSGSIZE");
    if (a.role == "publisher" || a.role == "echo") {
        // The publisher polls XPUB and stdin; the until-stdin echo polls stdin.
        const int short_timeout = 50;
        if (a.role == "publisher" || a.count == 0)
            zmq_setsockopt(s, ZMQ_RCVTIMEO, &short_timeout, sizeof short_timeout);
    }
    if (!a.bind.empty()) {
        check(zmq_bind(s, a.bind.c_str()) == 0, "bind " + a.bind);
        char ep[256];
        std::size_t len = sizeof ep;
        check(zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, ep, &len) == 0, "ZMQ_LAST_ENDPOINT");
        std::printf("ENDPOINT %s\n", ep);
        std::fflush(stdout);
    } else {
        check(zmq_connect(s, a.connect.c_str()) == 0, "connect " + a.connect);
    }

    if (a.role == "initiator")
        run_initiator(s, a, type);
    else if (a.role == "echo")
        run_echo(s, a);
    else if (a.role == "pusher")
        run_pusher(s);
    else if (a.role == "puller")
        run_puller(s);
    else if (a.role == "publisher")
        run_publisher(s, type);
    else if (a.role == "subscriber")
        run_subscriber(s, type);
    else if (a.role == "stream-server")
        run_stream_server(s);
    else if (a.role == "stream-client")
        run_stream_client(s);
    else
        fail("unknown --role '" + a.role + "'");

    zmq_close(s);
    zmq_ctx_term(ctx);
    std::printf("OK %s %s\n", a.role.c_str(), a.type.c_str());
    return 0;
}
