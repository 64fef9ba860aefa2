// fault_peer: the other process in the fault tests. It is killed (-9), stopped
// (SIGSTOP) and restarted by the gtest driver, so it must live in its own
// process; it talks to the driver through stdout lines only.
//
//   fault_peer --role sender   --type PAIR|DEALER|PUB --bind EP --epoch E
//       Streams single-frame messages "E:<seq>" (seq 0, 1, 2, ...) forever,
//       blocking when the peer is slow or absent. Prints "BOUND" once bound.
//   fault_peer --role receiver --type PAIR|DEALER|ROUTER|SUB (--bind|--connect) EP
//              [--count N | --until-seq N | --until-end] [--order contiguous|increasing]
//              [--size S] [--routing-id ID] [--rcvhwm H] [--heartbeat IVL:TIMEOUT:TTL]
//       Receives data messages [<seq>] or [<seq>, body of S bytes]; the body
//       pattern is checked byte by byte (a message must arrive whole). ROUTER
//       strips the sender id frame. --until-seq stops after a seq >= N. A "sync" message makes it
//       print "READY" once (the connection is up); "end" stops an --until-end run. Prints "FIRST
//       <seq>" on the first data message and, at the end, "DONE n=<count> first=<seq> last=<seq>"
//       (exit 0), or "ERROR <why>" (exit 1).
#include <zmq.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

struct args_t {
    std::string role, type, bind, connect, order = "contiguous", routing_id;
    long epoch = 0, count = 0, until_seq = -1, size = 0, rcvhwm = -1;
    int hb_ivl = 0, hb_timeout = 0, hb_ttl = 0;  // ZMQ_HEARTBEAT_*; 0: not set
    bool until_end = false;
};

[[noreturn]] void usage(const std::string &why) {
    std::fprintf(stderr, "fault_peer: %s\n", why.c_str());
    std::exit(2);
}

int type_of(const std::string &t) {
    if (t == "PAIR")
        return ZMQ_PAIR;
    if (t == "DEALER")
        return ZMQ_DEALER;
    if (t == "ROUTER")
        return ZMQ_ROUTER;
    if (t == "SUB")
        return ZMQ_SUB;
    if (t == "PUB")
        return ZMQ_PUB;
    usage("--type " + t + ": allowed PAIR, DEALER, ROUTER, SUB, PUB");
}

args_t parse(int argc, char **argv) {
    args_t a;
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        auto val = [&]() -> std::string {
            if (i + 1 >= argc)
                usage(k + " needs a value");
            return argv[++i];
        };
        if (k == "--role")
            a.role = val();
        else if (k == "--type")
            a.type = val();
        else if (k == "--bind")
            a.bind = val();
        else if (k == "--connect")
            a.connect = val();
        else if (k == "--order")
            a.order = val();
        else if (k == "--routing-id")
            a.routing_id = val();
        else if (k == "--epoch")
            a.epoch = std::stol(val());
        else if (k == "--count")
            a.count = std::stol(val());
        else if (k == "--until-seq")
            a.until_seq = std::stol(val());
        else if (k == "--size")
            a.size = std::stol(val());
        else if (k == "--rcvhwm")
            a.rcvhwm = std::stol(val());
        else if (k == "--until-end")
            a.until_end = true;
        else if (k == "--heartbeat") {
            if (std::sscanf(val().c_str(), "%d:%d:%d", &a.hb_ivl, &a.hb_timeout, &a.hb_ttl) != 3)
                usage("--heartbeat IVL:TIMEOUT:TTL (ms)");
        } else
            usage("unknown argument " + k);
    }
    if (a.role != "sender" && a.role != "receiver")
        usage("--role: allowed sender, receiver");
    if (a.bind.empty() == a.connect.empty())
        usage("give exactly one of --bind, --connect");
    if (a.order != "contiguous" && a.order != "increasing")
        usage("--order " + a.order + ": allowed contiguous, increasing");
    return a;
}

void say(const std::string &line) {
    // stdout is a pipe to the driver: one write per line, flushed at once.
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
}

[[noreturn]] void fail(const std::string &why) {
    say("ERROR " + why);
    std::_Exit(1);
}

int run_sender(void *s, const args_t &a) {
    say("BOUND");
    for (long seq = 0;; ++seq) {
        const std::string body = std::to_string(a.epoch) + ":" + std::to_string(seq);
        if (zmq_send(s, body.data(), body.size(), 0) < 0)
            fail(std::string("send: ") + zmq_strerror(zmq_errno()));
        // Paced so that "mid-stream" lasts long enough to be interrupted.
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

// The body every sender in these tests writes for sequence number `seq`.
inline unsigned char pattern(long seq, size_t i) { return static_cast<unsigned char>(seq * 7 + i); }

int run_receiver(void *s, const args_t &a) {
    bool ready = false;
    long n = 0, first = -1, last = -1;
    std::vector<std::string> frames;
    for (;;) {
        frames.clear();
        do {
            zmq_msg_t m;
            zmq_msg_init(&m);
            if (zmq_msg_recv(&m, s, 0) < 0)
                fail(std::string("recv: ") + zmq_strerror(zmq_errno()));
            frames.emplace_back(static_cast<const char *>(zmq_msg_data(&m)), zmq_msg_size(&m));
            zmq_msg_close(&m);
        } while ([&] {
            int more = 0;
            size_t len = sizeof more;
            zmq_getsockopt(s, ZMQ_RCVMORE, &more, &len);
            return more != 0;
        }());
        if (a.type == "ROUTER")
            frames.erase(frames.begin());  // sender id
        if (frames.empty())
            fail("message with no frame after the routing id");
        const std::string &head = frames[0];
        if (head == "sync") {
            if (!ready)
                say("READY");
            ready = true;
            continue;
        }
        if (head == "end") {
            if (!a.until_end)
                fail("unexpected end marker");
            break;
        }
        char *endp = nullptr;
        const long seq = std::strtol(head.c_str(), &endp, 10);
        if (head.empty() || *endp != '\0')
            fail("bad header frame '" + head + "'");
        const size_t want_frames = a.size > 0 ? 2 : 1;
        if (frames.size() != want_frames)
            fail("seq " + head + ": " + std::to_string(frames.size()) + " frames, want " +
                 std::to_string(want_frames));
        if (a.size > 0) {
            const std::string &body = frames[1];
            if (body.size() != static_cast<size_t>(a.size))
                fail("seq " + head + ": body " + std::to_string(body.size()) + " bytes");
            for (size_t i = 0; i < body.size(); ++i)
                if (static_cast<unsigned char>(body[i]) != pattern(seq, i))
                    fail("seq " + head + ": body corrupt at byte " + std::to_string(i));
        }
        if (first < 0) {
            first = seq;
            say("FIRST " + std::to_string(seq));
        } else if (a.order == "contiguous" ? seq != last + 1 : seq <= last) {
            fail("out of order: " + std::to_string(seq) + " after " + std::to_string(last));
        }
        last = seq;
        ++n;
        if (a.count > 0 && n == a.count)
            break;
        if (a.until_seq >= 0 && seq >= a.until_seq)
            break;
    }
    say("DONE n=" + std::to_string(n) + " first=" + std::to_string(first) +
        " last=" + std::to_string(last));
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    const args_t a = parse(argc, argv);
    void *ctx = zmq_ctx_new();
    void *s = zmq_socket(ctx, type_of(a.type));
    if (!s)
        fail(std::string("zmq_socket: ") + zmq_strerror(zmq_errno()));
    if (!a.routing_id.empty())
        zmq_setsockopt(s, ZMQ_ROUTING_ID, a.routing_id.data(), a.routing_id.size());
    if (a.rcvhwm >= 0) {
        const int h = static_cast<int>(a.rcvhwm);
        zmq_setsockopt(s, ZMQ_RCVHWM, &h, sizeof h);
    }
    if (a.type == "SUB")
        zmq_setsockopt(s, ZMQ_SUBSCRIBE, "", 0);
    if (a.hb_ivl > 0) {
        zmq_setsockopt(s, ZMQ_HEARTBEAT_IVL, &a.hb_ivl, sizeof a.hb_ivl);
        zmq_setsockopt(s, ZMQ_HEARTBEAT_TIMEOUT, &a.hb_timeout, sizeof a.hb_timeout);
        zmq_setsockopt(s, ZMQ_HEARTBEAT_TTL, &a.hb_ttl, sizeof a.hb_ttl);
    }
    const int rc = a.bind.empty() ? zmq_connect(s, a.connect.c_str()) : zmq_bind(s, a.bind.c_str());
    if (rc != 0)
        fail((a.bind.empty() ? "connect " + a.connect : "bind " + a.bind) + ": " +
             zmq_strerror(zmq_errno()));
    const int out = a.role == "sender" ? run_sender(s, a) : run_receiver(s, a);
    int zero = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    zmq_close(s);
    zmq_ctx_term(ctx);
    return out;
}
