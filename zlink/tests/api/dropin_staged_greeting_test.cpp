// The ZMTP greeting as a raw TCP peer sees it (libzmq 4.3.5's test_stream reads a
// DEALER through a STREAM socket): libzmq sends the 10-octet signature alone, the
// version-major once the peer's signature arrived, and the other 53 octets once the
// peer's version-major arrived; READY only after the peer's whole greeting. zlink must
// put the same bytes on the wire in the same steps. zmq.h on the zlink side, a plain
// POSIX socket on the other, so nothing here depends on zlink's codec.
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "api_test_util.hpp"
#include "loopback_socket.hpp"
#include "zmq.h"

namespace {

using namespace std::chrono_literals;
using api_test::last_endpoint;
using test_support::unique_fd;

// How long a test waits to be sure the other side sent nothing more. Long
// enough for an IO thread on a loaded 2-core host; a byte that was due
// arrives in microseconds.
constexpr int quiet_ms = 300;
constexpr int deadline_ms = 5000;

std::string signature(std::uint8_t legacy_length = 1) {
    std::string s(10, '\0');
    s[0] = '\xff';
    s[8] = static_cast<char>(legacy_length);
    s[9] = '\x7f';
    return s;
}

// Octets 11-63 of a NULL ZMTP 3.1 greeting: minor, mechanism, as-server, filler.
std::string greeting_tail() {
    std::string t(53, '\0');
    t[0] = 1;
    t.replace(1, 4, "NULL");
    return t;
}

std::string ready(const std::string &type) {
    std::string body = "\x05READY";
    body += static_cast<char>(11);
    body += "Socket-Type";
    body += std::string(3, '\0') + static_cast<char>(type.size()) + type;
    return std::string("\x04", 1) + static_cast<char>(body.size()) + body;
}

// One end of a TCP connection with reads bounded in time.
class raw_fd {
public:
    explicit raw_fd(unique_fd fd) : fd_(std::move(fd)) {}
    int get() const { return fd_.get(); }

    // Reads until `n` octets arrived, the peer closed, or `ms` passed.
    std::string read_up_to(size_t n, int ms = deadline_ms) {
        std::string got;
        const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
        while (got.size() < n) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                end - std::chrono::steady_clock::now());
            pollfd p{fd_.get(), POLLIN, 0};
            if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0)
                break;
            char buf[256];
            const ssize_t r = ::recv(fd_.get(), buf, std::min(sizeof buf, n - got.size()), 0);
            if (r <= 0) {
                closed_ = true;
                break;
            }
            got.append(buf, static_cast<size_t>(r));
        }
        return got;
    }
    // Whatever arrives within quiet_ms (expected: nothing).
    std::string read_more() { return read_up_to(4096, quiet_ms); }
    bool closed() const { return closed_; }
    void write(const std::string &s) {
        ASSERT_EQ(::send(fd_.get(), s.data(), s.size(), MSG_NOSIGNAL),
                  static_cast<ssize_t>(s.size()));
    }

private:
    unique_fd fd_;
    bool closed_ = false;
};

class dropin_staged_greeting : public api_test::socket_owner {
protected:
    dropin_staged_greeting() : socket_owner(deadline_ms) {}
    // A zlink DEALER connected to the raw listener; returns the accepted raw end.
    raw_fd dealer_to_raw(void *&dealer) {
        dealer = socket(ZMQ_DEALER);
        EXPECT_EQ(0, zmq_connect(dealer, listener.endpoint().c_str()));
        return accepted();
    }
    // The listener's next connection (an empty end after deadline_ms without one).
    raw_fd accepted() { return raw_fd{listener.accept(deadline_ms)}; }
    test_support::loopback_listener listener;  // a raw TCP listener on 127.0.0.1, any port
};

// test_stream.cpp:160 reads the signature as one 10-octet frame; zlink sent 64.
TEST_F(dropin_staged_greeting, ConnectingDealerSendsOnlyTheSignatureFirst) {
    void *dealer = nullptr;
    raw_fd peer = dealer_to_raw(dealer);
    ASSERT_GE(peer.get(), 0);
    EXPECT_EQ(peer.read_up_to(10), signature());
    EXPECT_EQ(peer.read_more(), "") << "nothing past the signature before ours arrives";
}

// The whole exchange a libzmq 4.3.5 peer goes through, step by step.
TEST_F(dropin_staged_greeting, EachStepWaitsForThePeersMatchingStep) {
    void *dealer = nullptr;
    raw_fd peer = dealer_to_raw(dealer);
    ASSERT_GE(peer.get(), 0);
    ASSERT_EQ(peer.read_up_to(10), signature());

    peer.write(signature());
    EXPECT_EQ(peer.read_up_to(1), std::string("\x03", 1)) << "version-major after our signature";
    EXPECT_EQ(peer.read_more(), "") << "the rest waits for our version-major";

    peer.write(std::string("\x03", 1));
    EXPECT_EQ(peer.read_up_to(53), greeting_tail());
    EXPECT_EQ(peer.read_more(), "") << "READY waits for our whole greeting";

    peer.write(greeting_tail());
    const std::string want_ready = ready("DEALER");
    const std::string got = peer.read_up_to(want_ready.size() + 13);
    // DEALER's READY also carries an empty Identity (13 octets), as libzmq's does.
    ASSERT_EQ(got.size(), want_ready.size() + 13);
    EXPECT_EQ(got.substr(2, want_ready.size() - 2), want_ready.substr(2));

    peer.write(ready("ROUTER"));
    ASSERT_EQ(5, zmq_send(dealer, "Hello", 5, 0));
    EXPECT_EQ(peer.read_up_to(7), std::string("\x00\x05Hello", 7));
}

// The accepting side stages its greeting the same way.
TEST_F(dropin_staged_greeting, BoundRouterSendsOnlyTheSignatureFirst) {
    void *router = socket(ZMQ_ROUTER);
    ASSERT_EQ(0, zmq_bind(router, "tcp://127.0.0.1:*"));
    raw_fd peer{test_support::connect_loopback(test_support::port_of(last_endpoint(router)))};
    ASSERT_GE(peer.get(), 0);
    EXPECT_EQ(peer.read_up_to(10), signature());
    EXPECT_EQ(peer.read_more(), "");
    peer.write(signature());
    EXPECT_EQ(peer.read_up_to(1), std::string("\x03", 1));
}

// libzmq writes the routing id's size + 1 into the padding (a ZMTP 1.0 peer reads it
// as the length of the identity frame).
TEST_F(dropin_staged_greeting, PaddingCarriesRoutingIdLengthPlusOne) {
    void *dealer = socket(ZMQ_DEALER);
    ASSERT_EQ(0, zmq_setsockopt(dealer, ZMQ_ROUTING_ID, "abc", 3));
    ASSERT_EQ(0, zmq_connect(dealer, listener.endpoint().c_str()));
    raw_fd peer = accepted();
    ASSERT_GE(peer.get(), 0);
    EXPECT_EQ(peer.read_up_to(10), signature(4));
}

// A ZMTP 2.0 peer (version-major 1) is refused after our version-major: it never
// sees our mechanism, and the connection closes.
TEST_F(dropin_staged_greeting, OldPeerIsRefusedBeforeTheMechanism) {
    void *dealer = nullptr;
    raw_fd peer = dealer_to_raw(dealer);
    ASSERT_GE(peer.get(), 0);
    ASSERT_EQ(peer.read_up_to(10), signature());
    peer.write(signature());
    peer.write(std::string("\x01\x05", 2));
    EXPECT_EQ(peer.read_up_to(64), std::string("\x03", 1));
    EXPECT_TRUE(peer.closed()) << "zlink does not downgrade";
}

}  // namespace
