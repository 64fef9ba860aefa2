// Codec peer: the same roles and command line as peer.cpp, but built only on the
// zlink_wire codec and blocking POSIX sockets - no zlink core, no libzmq. Run by
// run_interop.py against interop_peer_libzmq, it shows that the codec's greeting,
// NULL handshake, framing, subscriptions and commands interoperate with libzmq
// 4.3.5 independently of the engine built on top of it.
//
// Supported: --type PAIR/DEALER (initiator, echo), SUB/XSUB (subscriber),
// PUB/XPUB (publisher); one connection; tcp://host:port and ipc://path.
// --zmtp 3.0 plays a ZMTP 3.0 peer: announces 3.0, sends subscriptions as
// \x01/\x00 messages and refuses SUBSCRIBE/CANCEL commands (which 3.0 lacks).
#include "wire/command.hpp"
#include "wire/frame_decoder.hpp"
#include "wire/frame_encoder.hpp"
#include "wire/null_handshake.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace zlink::wire;
using frames = std::vector<std::string>;
using clock_type = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string &why) {
    std::fprintf(stderr, "codec_peer: FAIL: %s\n", why.c_str());
    std::exit(1);
}

void check(bool ok, const std::string &why) {
    if (!ok)
        fail(why);
}

std::span<const std::uint8_t> bytes_of(const std::string &s) {
    return {reinterpret_cast<const std::uint8_t *>(s.data()), s.size()};
}

// ---- plain sockets ------------------------------------------------------------------

int open_endpoint(const std::string &ep, bool bind) {
    int fd = -1;
    if (ep.rfind("ipc://", 0) == 0) {
        sockaddr_un sa{};
        sa.sun_family = AF_UNIX;
        const std::string path = ep.substr(6);
        check(path.size() < sizeof sa.sun_path, "ipc path too long");
        std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
        fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        if (bind) {
            check(::bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) == 0, "bind " + ep);
            check(::listen(fd, 1) == 0, "listen");
            std::printf("ENDPOINT %s\n", ep.c_str());
            std::fflush(stdout);
            const int c = ::accept(fd, nullptr, nullptr);
            ::close(fd);
            ::unlink(path.c_str());
            return c;
        }
        // The binder may still be starting its listener: retry briefly.
        for (int i = 0; i < 100; ++i) {
            if (::connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) == 0)
                return fd;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        fail("connect " + ep);
    }
    check(ep.rfind("tcp://", 0) == 0, "endpoint must be tcp:// or ipc://, got " + ep);
    const std::string hp = ep.substr(6);
    const auto colon = hp.rfind(':');
    check(colon != std::string::npos, "tcp endpoint needs host:port");
    std::string host = hp.substr(0, colon), port = hp.substr(colon + 1);
    if (port == "*")
        port = "0";
    addrinfo hints{}, *res = nullptr;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_family = AF_INET;
    check(::getaddrinfo(host.c_str(), port.c_str(), &hints, &res) == 0, "resolve " + ep);
    fd = ::socket(res->ai_family, SOCK_STREAM, 0);
    if (bind) {
        const int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        check(::bind(fd, res->ai_addr, res->ai_addrlen) == 0, "bind " + ep);
        check(::listen(fd, 1) == 0, "listen");
        sockaddr_storage ss{};
        socklen_t len = sizeof ss;
        ::getsockname(fd, reinterpret_cast<sockaddr *>(&ss), &len);
        char h[NI_MAXHOST], p[NI_MAXSERV];
        ::getnameinfo(reinterpret_cast<sockaddr *>(&ss), len, h, sizeof h, p, sizeof p,
                      NI_NUMERICHOST | NI_NUMERICSERV);
        std::printf("ENDPOINT tcp://%s:%s\n", h, p);
        std::fflush(stdout);
        const int c = ::accept(fd, nullptr, nullptr);
        ::close(fd);
        ::freeaddrinfo(res);
        return c;
    }
    const bool ok = ::connect(fd, res->ai_addr, res->ai_addrlen) == 0;
    ::freeaddrinfo(res);
    check(ok, "connect " + ep);
    return fd;
}

// ---- one ZMTP connection ------------------------------------------------------------

class connection {
public:
    connection(int fd, socket_type self, const std::string &id, bool zmtp30)
        : fd_(fd), hs_({.self = self,
                        .routing_id = bytes_of(id),
                        .announce_minor = zmtp30 ? std::uint8_t{0} : our_minor}),
          zmtp30_(zmtp30) {
        timeval tv{5, 0};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        while (!hs_.done()) {
            write_all(hs_.outgoing());
            hs_.consume_outgoing(hs_.outgoing().size());
            check(!hs_.failed(), std::string("handshake: ") + to_string(hs_.error()) + " " +
                                     std::string(hs_.error_detail()));
            check(fill(), "peer closed or timed out during the handshake");
            begin_ += hs_.feed(std::span(buf_).subspan(begin_, end_ - begin_));
        }
        write_all(hs_.outgoing());
        hs_.consume_outgoing(hs_.outgoing().size());
    }

    zmtp_version peer_version() const { return hs_.peer_version(); }
    bool closed() const { return closed_; }
    std::vector<std::string> subscriptions;  // for publishers: active topics (multiset)
    bool saw_subscribe = false, saw_cancel = false;

    void send(const frames &msg) {
        for (std::size_t i = 0; i < msg.size(); ++i)
            push([&] { return enc_.add(bytes_of(msg[i]), i + 1 < msg.size()); });
        flush();
    }

    void send_ping(std::uint16_t ttl_deciseconds) {
        push([&] { return enc_.add_ping(ttl_deciseconds, bytes_of("probe")); });
        flush();
    }

    void send_subscription(bool subscribe, const std::string &topic) {
        push([&] {
            return enc_.add_subscription(subscribe, bytes_of(topic), hs_.session_version());
        });
        flush();
    }

    // One whole message; nullopt on timeout (or, with wait=false, when nothing is
    // buffered or readable right now). Commands are handled on the way.
    std::optional<frames> recv(bool wait = true) {
        frames msg;
        for (;;) {
            std::size_t used = 0;
            const auto s = dec_.decode(std::span(buf_).subspan(begin_, end_ - begin_), used);
            begin_ += used;
            if (s == frame_decoder::step::header) {
                body_.assign(dec_.header().size, 0);
                dec_.set_body(body_);
                continue;
            }
            if (s == frame_decoder::step::frame) {
                if (dec_.header().command()) {
                    on_command();
                    continue;
                }
                msg.emplace_back(body_.begin(), body_.end());
                if (dec_.header().more())
                    continue;
                if (on_subscription_message(msg)) {
                    msg.clear();
                    continue;
                }
                return msg;
            }
            check(s != frame_decoder::step::error,
                  std::string("decode: ") + to_string(dec_.error()));
            if (!wait && msg.empty()) {
                pollfd p{fd_, POLLIN, 0};
                if (::poll(&p, 1, 0) <= 0)
                    return std::nullopt;
            }
            if (!fill())
                return std::nullopt;
        }
    }

private:
    // Appends to the batch; a full batch is written out first.
    template <class Add>
    void push(Add add) {
        if (!add()) {
            flush();
            check(add(), "frame does not fit an empty batch");
        }
    }

    void flush() {
        while (!enc_.empty()) {
            std::vector<iovec> iov;
            for (const auto &b : enc_.buffers())
                iov.push_back({const_cast<std::uint8_t *>(b.data), b.size});
            const ssize_t n = ::writev(fd_, iov.data(), static_cast<int>(iov.size()));
            check(n > 0, "writev");
            enc_.consume(static_cast<std::size_t>(n));
        }
    }

    void write_all(std::span<const std::uint8_t> b) {
        while (!b.empty()) {
            const ssize_t n = ::write(fd_, b.data(), b.size());
            check(n > 0, "write");
            b = b.subspan(static_cast<std::size_t>(n));
        }
    }

    // Reads more bytes; false on timeout or EOF (closed() tells which).
    bool fill() {
        if (closed_)
            return false;
        if (begin_ == end_)
            begin_ = end_ = 0;
        if (end_ == buf_.size()) {
            std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
            end_ -= begin_;
            begin_ = 0;
        }
        const ssize_t n = ::read(fd_, buf_.data() + end_, buf_.size() - end_);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return false;
        if (n == 0) {
            closed_ = true;
            return false;
        }
        check(n > 0, "read");
        end_ += static_cast<std::size_t>(n);
        return true;
    }

    void on_command() {
        command_view cmd;
        check(parse_command(body_, cmd) == wire_error::none, "malformed command");
        if (cmd.kind == command_kind::ping) {
            std::uint16_t ttl;
            std::span<const std::uint8_t> ctx;
            check(parse_ping_data(cmd.data, ttl, ctx) == wire_error::none, "bad PING");
            check(enc_.add_pong(ctx), "PONG");
            flush();
        } else if (cmd.kind == command_kind::subscribe || cmd.kind == command_kind::cancel) {
            // A real ZMTP 3.0 peer does not know these commands: the subscription
            // would be lost. The other side must have downgraded to the message form.
            check(!zmtp30_,
                  "ZMTP 3.0 peer received a ZMTP 3.1 " + std::string(cmd.name) + " command");
            track(cmd.kind == command_kind::subscribe,
                  std::string(cmd.data.begin(), cmd.data.end()));
        } else if (cmd.kind == command_kind::error) {
            fail("peer sent ERROR");
        }
    }

    // ZMTP 3.0 form (libzmq accepts and may send it): \x01/\x00 + topic.
    bool on_subscription_message(const frames &msg) {
        if (msg.size() != 1)
            return false;
        std::span<const std::uint8_t> topic;
        const auto a = classify_subscription_message(bytes_of(msg[0]), topic);
        if (a == subscription_action::none || !publisher_)
            return false;
        track(a == subscription_action::subscribe, std::string(topic.begin(), topic.end()));
        return true;
    }

    void track(bool subscribe, const std::string &topic) {
        if (subscribe) {
            saw_subscribe = true;
            subscriptions.push_back(topic);
        } else {
            saw_cancel = true;
            for (auto it = subscriptions.begin(); it != subscriptions.end(); ++it)
                if (*it == topic) {
                    subscriptions.erase(it);
                    break;
                }
        }
    }

public:
    bool publisher_ = false;

private:
    int fd_;
    null_handshake hs_;
    frame_decoder dec_;
    frame_encoder enc_;
    std::vector<std::uint8_t> buf_ = std::vector<std::uint8_t>(64 * 1024);
    std::size_t begin_ = 0, end_ = 0;
    std::vector<std::uint8_t> body_;
    bool closed_ = false;
    bool zmtp30_ = false;
};

// ---- roles (same scripts as peer.cpp) -------------------------------------------------

std::string big_payload(char lead) {
    std::string s(1 << 20, '\0');
    for (std::size_t i = 0; i < s.size(); ++i)
        s[i] = static_cast<char>('a' + (i * 31) % 26);
    s[0] = lead;
    return s;
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

bool stdin_has_line() {
    pollfd p{0, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0)
        return false;
    char buf[256];
    (void)::read(0, buf, sizeof buf);
    return true;
}

bool matches(const connection &c, const std::string &msg) {
    for (const auto &t : c.subscriptions)
        if (msg.compare(0, t.size(), t) == 0)
            return true;
    return false;
}

}  // namespace

int main(int argc, char **argv) {
    std::string role, type, bind, connect, id;
    long count = 0;
    int heartbeat_ms = 0;
    bool zmtp30 = false;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i], v = argv[i + 1];
        if (k == "--role")
            role = v;
        else if (k == "--type")
            type = v;
        else if (k == "--bind")
            bind = v;
        else if (k == "--connect")
            connect = v;
        else if (k == "--count")
            count = std::stol(v);
        else if (k == "--id")
            id = v;
        else if (k == "--zmtp")
            zmtp30 = (v == "3.0");
        else if (k == "--heartbeat")
            heartbeat_ms = std::stoi(v);  // pauses like peer.cpp; sends no PING
        else
            fail("unsupported option " + k +
                 " (codec peer: --role --type --bind/--connect --count --id)");
    }
    std::signal(SIGPIPE, SIG_IGN);  // a vanished peer shows up as EPIPE, reported below
    const auto st = parse_socket_type(type);
    check(st.has_value(), "unsupported --type '" + type + "'");
    const int fd = open_endpoint(bind.empty() ? connect : bind, !bind.empty());
    check(fd >= 0, "no connection");
    connection c(fd, *st, id, zmtp30);
    c.publisher_ = (*st == socket_type::pub || *st == socket_type::xpub);

    if (role == "initiator") {
        for (long i = 0; i < 104; ++i) {
            const frames msg = script_message(i);
            if (heartbeat_ms > 0 && i == 50) {
                // Stay responsive while pausing: PINGs are answered inside recv().
                const auto until = clock_type::now() + std::chrono::milliseconds(15 * heartbeat_ms);
                while (clock_type::now() < until) {
                    check(!c.recv(false).has_value(), "unexpected message while idle");
                    std::this_thread::sleep_for(std::chrono::milliseconds(2));
                }
            }
            c.send(msg);
            const auto got = c.recv();
            check(got.has_value(), "no echo for message " + std::to_string(i));
            check(*got == msg, "echo of message " + std::to_string(i) + " differs");
        }
    } else if (role == "echo") {
        for (long n = 0; n < count; ++n) {
            const auto got = c.recv();
            check(got.has_value(), "timed out after echoing " + std::to_string(n));
            c.send(*got);
        }
    } else if (role == "ttl-probe") {
        // RFC 37: the ping-ttl "provides a strong hint to the other peer to disconnect
        // if no further traffic is received after that time". Send one PING with a
        // 0.3 s TTL and nothing else; expect the peer to hang up within 5 s.
        c.send_ping(3);
        const auto start = clock_type::now();
        while (!c.closed()) {
            check(clock_type::now() - start < std::chrono::seconds(5),
                  "peer kept the connection open 5 s past a 0.3 s PING TTL");
            check(!c.recv(false).has_value(), "unexpected message");
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        const auto ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - start)
                .count();
        check(ms >= 250, "peer hung up after " + std::to_string(ms) + " ms, before the 300 ms TTL");
        std::printf("peer closed %lld ms after the PING\n", static_cast<long long>(ms));
    } else if (role == "subscriber") {
        c.send_subscription(true, "A");
        const std::string big = big_payload('A');
        bool single = false, multi = false, large = false;
        while (!(single && multi && large)) {
            const auto f = c.recv();
            check(f.has_value(), "subscriber timed out");
            check(!f->empty() && !(*f)[0].empty() && (*f)[0][0] == 'A',
                  "message outside subscription");
            single |= *f == frames{"A-single"};
            multi |= *f == frames{"A-multi", "", "end"};
            large |= *f == frames{big};
        }
        c.send_subscription(false, "A");
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
    } else if (role == "publisher") {
        const std::string big = big_payload('A');
        const auto deadline = clock_type::now() + std::chrono::seconds(30);
        for (long round = 0; !stdin_has_line(); ++round) {
            check(clock_type::now() < deadline, "publisher was never told to stop");
            while (c.recv(false)) {
            }
            if (c.closed()) {  // subscriber gone: wait for the driver's stop
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                continue;
            }
            // PUB filters at the publisher (RFC 29), so only matching messages go out.
            for (const frames &m : {frames{"B-filtered-" + std::to_string(round)},
                                    frames{"A-single"}, frames{"A-multi", "", "end"}})
                if (matches(c, m[0]))
                    c.send(m);
            if (round % 10 == 0 && matches(c, big))
                c.send({big});
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        check(c.saw_subscribe, "publisher never received the subscription");
        if (*st == socket_type::xpub)
            check(c.saw_cancel, "XPUB never received the cancellation");
    } else {
        fail("unsupported --role '" + role + "'");
    }
    ::close(fd);
    std::printf("OK codec %s %s\n", role.c_str(), type.c_str());
    return 0;
}
