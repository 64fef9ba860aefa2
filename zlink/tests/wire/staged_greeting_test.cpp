// Our greeting in libzmq 4.3.5's three steps (the order RFC 23/37 describe for a peer
// that detects older versions): the signature at once, version-major once the peer's
// signature arrived, the rest once the peer's version-major arrived; commands after
// the whole greeting. Checked on the handshake state machine at every peer octet.
#include "wire/null_handshake.hpp"
#include "wire/plain_client.hpp"

#include "test_bytes.hpp"

#include <gtest/gtest.h>

namespace zlink::wire {
namespace {

using test::bytes;
using test::cat;
using test::repeat;

bytes peer_greeting(int major = 3) {
    bytes m{'N', 'U', 'L', 'L'};
    m.resize(20, 0);
    return cat({{0xFF}, repeat(0, 7), {1, 0x7F, major, 1}, m, {0}, repeat(0, 31)});
}

// Takes whatever the handshake lets us send now.
bytes drain(handshake &hs) {
    const auto out = hs.outgoing();
    bytes b(out.begin(), out.end());
    hs.consume_outgoing(b.size());
    return b;
}

TEST(StagedGreeting, ReleaseSteps) {
    EXPECT_EQ(greeting_release(0), 10u);
    EXPECT_EQ(greeting_release(9), 10u);
    EXPECT_EQ(greeting_release(10), 11u);
    EXPECT_EQ(greeting_release(11), 64u);
    EXPECT_EQ(greeting_release(64), 64u);
}

TEST(StagedGreeting, OnlyTheSignatureBeforeThePeerSendsAnything) {
    null_handshake hs({.self = socket_type::dealer});
    // Padding = routing id size + 1, big-endian, as libzmq writes it.
    EXPECT_EQ(drain(hs), cat({{0xFF}, repeat(0, 7), {1, 0x7F}}));
    EXPECT_TRUE(hs.outgoing().empty());
}

TEST(StagedGreeting, PaddingCarriesRoutingIdLength) {
    const bytes id{'a', 'b', 'c'};
    null_handshake hs({.self = socket_type::dealer, .routing_id = id});
    EXPECT_EQ(drain(hs), cat({{0xFF}, repeat(0, 7), {4, 0x7F}}));
}

// Fed one octet at a time, the handshake releases exactly greeting_release(k) octets
// of its greeting after k peer octets, and READY after the 64th.
TEST(StagedGreeting, EachPeerOctetReleasesTheMatchingStep) {
    null_handshake hs({.self = socket_type::dealer});
    const auto ours = make_greeting("NULL", false, our_minor, 0);
    const bytes pg = peer_greeting();
    bytes sent = drain(hs);
    for (std::size_t k = 1; k <= pg.size(); ++k) {
        ASSERT_EQ(hs.feed(std::span(pg).subspan(k - 1, 1)), 1u);
        const bytes now = drain(hs);
        sent.insert(sent.end(), now.begin(), now.end());
        if (k < pg.size())
            ASSERT_EQ(sent.size(), greeting_release(k)) << "after " << k << " peer octets";
    }
    ASSERT_GT(sent.size(), greeting_size) << "READY after the peer's whole greeting";
    EXPECT_EQ(bytes(sent.begin(), sent.begin() + greeting_size), bytes(ours.begin(), ours.end()));
}

// The peer's whole greeting in one read: everything of ours at once.
TEST(StagedGreeting, WholePeerGreetingReleasesEverything) {
    null_handshake hs({.self = socket_type::pair});
    drain(hs);
    const bytes pg = peer_greeting();
    ASSERT_EQ(hs.feed(pg), pg.size());
    EXPECT_EQ(drain(hs).size(), 54u + ready_frame_size(socket_type::pair, {}));
}

// A peer that is not ZMTP 3.x never gets more than it needs to tell us apart:
// a bad signature leaves us at the signature, an old major at our major.
TEST(StagedGreeting, RefusedPeerSeesNoMore) {
    {
        null_handshake hs({.self = socket_type::pair});
        drain(hs);
        bytes bad = peer_greeting();
        bad[9] = 0x7E;  // ZMTP 1.0: last padding octet even
        hs.feed(bad);
        EXPECT_TRUE(hs.failed());
        EXPECT_TRUE(hs.outgoing().empty());
    }
    {
        null_handshake hs({.self = socket_type::pair});
        drain(hs);
        hs.feed(peer_greeting(2));
        EXPECT_TRUE(hs.failed());
        EXPECT_EQ(drain(hs), bytes{3});
    }
}

// Mechanisms other than NULL go through the same gate (mechanism_base).
TEST(StagedGreeting, PlainClientWaitsToo) {
    plain_client hs({.self = socket_type::dealer}, "user", "pass");
    EXPECT_EQ(drain(hs).size(), signature_size);
}

}  // namespace
}  // namespace zlink::wire
