// NULL-mechanism handshake (RFC 37 "The NULL Security Mechanism", "The Socket-Type
// Property"): both sides send READY; incompatible peers get an ERROR command.
#include "wire/null_handshake.hpp"

#include "test_bytes.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

namespace zlink::wire {
namespace {

using test::as_span;
using test::bytes;
using test::cat;
using test::repeat;

bytes peer_greeting(int minor = 1, std::string_view mech = "NULL") {
    bytes m(mech.begin(), mech.end());
    m.resize(20, 0);
    return cat({{0xFF}, repeat(0, 8), {0x7F, 3, minor}, m, {0}, repeat(0, 31)});
}

// A READY command frame built by hand from the grammar (independent of the encoder).
bytes ready(std::initializer_list<std::pair<std::string, bytes>> props) {
    bytes body = cat({{5}, "READY"});
    for (const auto &[name, value] : props) {
        const auto n = static_cast<std::uint32_t>(value.size());
        body = cat({body,
                    {static_cast<int>(name.size())},
                    name,
                    {int(n >> 24), int((n >> 16) & 0xFF), int((n >> 8) & 0xFF), int(n & 0xFF)},
                    value});
    }
    if (body.size() <= 255)
        return cat({{0x04, static_cast<int>(body.size())}, body});
    const std::uint64_t n = body.size();
    bytes hdr = {0x06};
    for (int i = 7; i >= 0; --i)
        hdr.push_back(static_cast<std::uint8_t>(n >> (8 * i)));
    return cat({hdr, body});
}

bytes str(std::string_view s) { return bytes(s.begin(), s.end()); }

bytes our_stream(socket_type self, std::span<const std::uint8_t> id = {}) {
    const auto g = make_greeting("NULL", false, our_minor, id.size());
    bytes r(ready_frame_size(self, id));
    write_ready_frame(r, self, id);
    return cat({bytes(g.begin(), g.end()), r});
}

// The signature goes at once, the rest of the greeting once the peer's signature and
// version-major arrived (staged_greeting_test.cpp checks each step).
TEST(Handshake, GreetingIsQueuedImmediatelyAndReadyOnlyAfterPeerGreeting) {
    null_handshake hs({.self = socket_type::pair});
    const auto g = make_greeting();
    EXPECT_EQ(bytes(hs.outgoing().begin(), hs.outgoing().end()), bytes(g.begin(), g.begin() + 10));
    hs.consume_outgoing(10);
    EXPECT_EQ(hs.outgoing().size(), 0u);
    const bytes pg = peer_greeting();
    EXPECT_EQ(hs.feed(std::span(pg).first(63)), 63u);
    EXPECT_EQ(hs.outgoing().size(), 54u) << "no READY before the peer's greeting is accepted";
    EXPECT_EQ(hs.feed(std::span(pg).subspan(63)), 1u);
    EXPECT_EQ(hs.outgoing().size(), 54u + ready_frame_size(socket_type::pair, {}));
    EXPECT_FALSE(hs.done());
}

struct ok_case {
    const char *name;
    socket_type self;
    bytes peer;  // greeting + READY
    socket_type peer_type;
    zmtp_version version;
    bool has_id;
    bytes id;
};

class HandshakeSucceeds : public ::testing::TestWithParam<ok_case> {};

// "A peer MAY start to send messages immediately after completing its handshake,
// that is, having both sent and received a READY command." Fed at every split point,
// followed by a traffic frame that the handshake must leave unconsumed.
TEST_P(HandshakeSucceeds, AtEverySplitPoint) {
    const auto &c = GetParam();
    const bytes traffic = {0x00, 0x01, 'm'};
    const bytes in = cat({c.peer, traffic});
    const bytes want_out = our_stream(c.self, as_span("me"));
    for (std::size_t split = 0; split <= in.size(); ++split) {
        null_handshake hs({.self = c.self, .routing_id = as_span("me")});
        const std::span<const std::uint8_t> all(in);
        std::size_t used = hs.feed(all.first(split));
        if (!hs.done())
            used += hs.feed(all.subspan(used));
        ASSERT_TRUE(hs.done()) << "split " << split << ": " << to_string(hs.error());
        EXPECT_FALSE(hs.failed());
        EXPECT_EQ(used, c.peer.size()) << "split " << split << ": traffic must stay unconsumed";
        EXPECT_EQ(hs.feed(all.subspan(used)), 0u);
        EXPECT_EQ(hs.peer_socket_type(), c.peer_type);
        EXPECT_EQ(hs.peer_version().minor, c.version.minor);
        EXPECT_EQ(hs.peer_has_routing_id(), c.has_id);
        EXPECT_EQ(bytes(hs.peer_routing_id().begin(), hs.peer_routing_id().end()), c.id);
        EXPECT_EQ(bytes(hs.outgoing().begin(), hs.outgoing().end()), want_out);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, HandshakeSucceeds,
    ::testing::Values(
        ok_case{"pair_pair",
                socket_type::pair,
                cat({peer_greeting(), ready({{"Socket-Type", str("PAIR")}})}),
                socket_type::pair,
                {3, 1},
                false,
                {}},
        // RFC 37 worked example: DEALER client, ROUTER server.
        ok_case{"router_dealer",
                socket_type::router,
                cat({peer_greeting(), ready({{"Socket-Type", str("DEALER")}, {"Identity", {}}})}),
                socket_type::dealer,
                {3, 1},
                true,
                {}},
        ok_case{"router_dealer_with_id",
                socket_type::router,
                cat({peer_greeting(),
                     ready({{"Socket-Type", str("DEALER")}, {"Identity", str("abc")}})}),
                socket_type::dealer,
                {3, 1},
                true,
                str("abc")},
        ok_case{"dealer_router",
                socket_type::dealer,
                cat({peer_greeting(), ready({{"Socket-Type", str("ROUTER")}})}),
                socket_type::router,
                {3, 1},
                false,
                {}},
        ok_case{"sub_xpub",
                socket_type::sub,
                cat({peer_greeting(), ready({{"Socket-Type", str("XPUB")}})}),
                socket_type::xpub,
                {3, 1},
                false,
                {}},
        // RFC 23 peer (ZMTP 3.0): same NULL handshake, version recorded for the
        // subscription form.
        ok_case{"pub_sub_zmtp30",
                socket_type::pub,
                cat({peer_greeting(0), ready({{"Socket-Type", str("SUB")}})}),
                socket_type::sub,
                {3, 0},
                false,
                {}},
        // "The case (upper or lower) of names SHALL NOT be significant."
        ok_case{"lowercase_property_name",
                socket_type::xsub,
                cat({peer_greeting(), ready({{"socket-type", str("PUB")}})}),
                socket_type::pub,
                {3, 1},
                false,
                {}},
        // Others preserved, order free; "X-" names are for applications.
        ok_case{"extra_properties",
                socket_type::pair,
                cat({peer_greeting(), ready({{"X-Foo", str("bar")},
                                             {"Socket-Type", str("PAIR")},
                                             {"Resource", str("a/b")}})}),
                socket_type::pair,
                {3, 1},
                false,
                {}},
        ok_case{"long_ready",
                socket_type::pair,
                cat({peer_greeting(),
                     ready({{"Socket-Type", str("PAIR")}, {"X-Big", repeat('b', 600)}})}),
                socket_type::pair,
                {3, 1},
                false,
                {}}),
    [](const auto &info) { return std::string(info.param.name); });

TEST(Handshake, PeerMetadataIsKept) {
    null_handshake hs({.self = socket_type::pair});
    const bytes in =
        cat({peer_greeting(), ready({{"Socket-Type", str("PAIR")}, {"X-Foo", str("bar")}})});
    hs.feed(in);
    ASSERT_TRUE(hs.done());
    std::span<const std::uint8_t> v;
    ASSERT_TRUE(find_property(hs.peer_metadata(), "x-foo", v));
    EXPECT_EQ(bytes(v.begin(), v.end()), str("bar"));
}

TEST(Handshake, ExtraPropertiesAreCopied) {
    auto name = std::make_unique<std::string>("X-App");
    auto value = std::make_unique<bytes>(str("v1"));
    const property_view extra[] = {{*name, *value}};
    null_handshake hs({.self = socket_type::dealer, .routing_id = {}, .extra = extra});
    name.reset();
    value.reset();
    hs.feed(peer_greeting());
    const auto out = hs.outgoing().subspan(64);
    command_view cmd;
    ASSERT_EQ(parse_command(out.subspan(2), cmd), wire_error::none);
    std::span<const std::uint8_t> v;
    ASSERT_TRUE(find_property(cmd.data, "X-App", v));
    EXPECT_EQ(bytes(v.begin(), v.end()), str("v1"));
}

struct fail_case {
    const char *name;
    socket_type self;
    bytes peer;
    wire_error error;
    bool sends_error_command;
    std::string detail;
};

class HandshakeFails : public ::testing::TestWithParam<fail_case> {};

TEST_P(HandshakeFails, WithClearError) {
    const auto &c = GetParam();
    null_handshake hs(
        {.self = c.self, .routing_id = {}, .extra = {}, .max_handshake_command = 1024});
    hs.feed(c.peer);
    ASSERT_TRUE(hs.failed());
    EXPECT_FALSE(hs.done());
    EXPECT_EQ(hs.error(), c.error) << to_string(hs.error());
    EXPECT_EQ(hs.error_detail(), c.detail);
    EXPECT_EQ(hs.feed(c.peer), 0u);
    const bytes out(hs.outgoing().begin(), hs.outgoing().end());
    bytes err(max_error_frame_size);
    err.resize(write_error_frame(err, "Invalid socket type"));
    const bool ends_with_error =
        out.size() >= err.size() && std::equal(err.begin(), err.end(), out.end() - err.size());
    EXPECT_EQ(ends_with_error, c.sends_error_command);
}

const bytes g31 = peer_greeting();

INSTANTIATE_TEST_SUITE_P(
    Cases, HandshakeFails,
    ::testing::Values(
        // "When a peer validates the socket type, it SHOULD handle errors by returning
        // an ERROR command, and then disconnecting the peer."
        fail_case{"pub_pub", socket_type::pub, cat({g31, ready({{"Socket-Type", str("PUB")}})}),
                  wire_error::incompatible_socket_type, true, "PUB"},
        fail_case{"pair_dealer", socket_type::pair,
                  cat({g31, ready({{"Socket-Type", str("DEALER")}})}),
                  wire_error::incompatible_socket_type, true, "DEALER"},
        fail_case{"rep_rep", socket_type::rep, cat({g31, ready({{"Socket-Type", str("REP")}})}),
                  wire_error::incompatible_socket_type, true, "REP"},
        fail_case{"sub_sub", socket_type::sub, cat({g31, ready({{"Socket-Type", str("SUB")}})}),
                  wire_error::incompatible_socket_type, true, "SUB"},
        fail_case{"unknown_type", socket_type::pair,
                  cat({g31, ready({{"Socket-Type", str("CLIENT")}})}),
                  wire_error::unknown_socket_type, true, "CLIENT"},
        fail_case{"stream_is_not_zmtp", socket_type::pair,
                  cat({g31, ready({{"Socket-Type", str("STREAM")}})}),
                  wire_error::unknown_socket_type, true, "STREAM"},
        // "The sender SHOULD specify the Socket-Type." - without it we cannot validate.
        fail_case{"missing_type", socket_type::pair, cat({g31, ready({{"Identity", {}}})}),
                  wire_error::missing_socket_type, false, ""},
        // "The peer SHALL treat an incoming ERROR command as fatal"
        fail_case{"peer_error", socket_type::pair,
                  cat({g31, {0x04, 0x0A, 0x05}, "ERROR", {3}, "bad"}), wire_error::peer_sent_error,
                  false, "bad"},
        // "If the mechanism that the peer received does not exactly match the
        // mechanism it sent, it MUST close the connection."
        fail_case{"curve", socket_type::pair, peer_greeting(1, "CURVE"),
                  wire_error::mechanism_mismatch, false, "CURVE"},
        fail_case{"plain", socket_type::pair, peer_greeting(1, "PLAIN"),
                  wire_error::mechanism_mismatch, false, "PLAIN"},
        fail_case{"zmtp20", socket_type::pair, cat({{0xFF}, repeat(0, 8), {0x7F, 0x01}}),
                  wire_error::unsupported_version, false, ""},
        fail_case{"garbage", socket_type::pair, str("garbage garbage"), wire_error::bad_signature,
                  false, ""},
        // "null = ready *message | error" - nothing else may come first.
        fail_case{"message_first", socket_type::pair, cat({g31, {0x00, 0x01, 'x'}}),
                  wire_error::unexpected_message, false, ""},
        fail_case{"ping_first", socket_type::pair, cat({g31, {0x04, 0x07, 0x04}, "PING", {0, 0}}),
                  wire_error::unexpected_command, false, "PING"},
        fail_case{"bad_metadata", socket_type::pair,
                  cat({g31, {0x04, 0x08, 0x05}, "READY", {0, 0}}), wire_error::malformed_metadata,
                  false, ""},
        fail_case{"bad_command", socket_type::pair, cat({g31, {0x04, 0x01, 0x00}}),
                  wire_error::malformed_command, false, ""},
        fail_case{"reserved_flags", socket_type::pair, cat({g31, {0x40, 0x00}}),
                  wire_error::reserved_flags_set, false, ""},
        // Memory stays bounded: a huge READY is refused at its header.
        fail_case{"ready_too_large", socket_type::pair,
                  cat({g31, {0x06, 0, 0, 0, 0, 0x7F, 0, 0, 0}}), wire_error::handshake_too_large,
                  false, ""}),
    [](const auto &info) { return std::string(info.param.name); });

TEST(Handshake, MismatchedMechanismQueuesNoReady) {
    null_handshake hs({.self = socket_type::pair});
    hs.feed(peer_greeting(1, "CURVE"));
    EXPECT_EQ(hs.outgoing().size(), 64u);
}

// Two zlink handshakes talking to each other through their outgoing() bytes.
TEST(Handshake, TwoPeersComplete) {
    null_handshake a({.self = socket_type::dealer, .routing_id = as_span("A")});
    null_handshake b({.self = socket_type::router});
    for (int round = 0; round < 4 && !(a.done() && b.done()); ++round) {
        const bytes ao(a.outgoing().begin(), a.outgoing().end());
        const bytes bo(b.outgoing().begin(), b.outgoing().end());
        a.consume_outgoing(ao.size());
        b.consume_outgoing(bo.size());
        EXPECT_EQ(b.feed(ao), ao.size());
        EXPECT_EQ(a.feed(bo), bo.size());
    }
    ASSERT_TRUE(a.done());
    ASSERT_TRUE(b.done());
    EXPECT_EQ(b.peer_socket_type(), socket_type::dealer);
    EXPECT_EQ(bytes(b.peer_routing_id().begin(), b.peer_routing_id().end()), str("A"));
    EXPECT_EQ(a.peer_socket_type(), socket_type::router);
    EXPECT_TRUE(a.peer_has_routing_id());  // libzmq-style: ROUTER sends (empty) Identity
    EXPECT_TRUE(a.peer_routing_id().empty());
}

}  // namespace
}  // namespace zlink::wire

namespace zlink::wire {
namespace {

// "A peer SHALL always use its own protocol (including framing) when talking to an
// equal or higher protocol peer." / "A peer MAY downgrade its protocol to talk to a
// lower protocol peer."
struct version_case {
    const char *name;
    std::uint8_t ours_minor;
    int peer_major, peer_minor;
    zmtp_version session;
};

class SessionVersion : public ::testing::TestWithParam<version_case> {};

TEST_P(SessionVersion, IsTheLowerOfBoth) {
    const auto &c = GetParam();
    null_handshake hs({.self = socket_type::pair, .announce_minor = c.ours_minor});
    EXPECT_EQ(hs.outgoing()[11], c.ours_minor) << "announced minor version";
    bytes g = {0xFF,
               0,
               0,
               0,
               0,
               0,
               0,
               0,
               0,
               0x7F,
               static_cast<std::uint8_t>(c.peer_major),
               static_cast<std::uint8_t>(c.peer_minor)};
    g.resize(12 + 20 + 1 + 31, 0);
    std::memcpy(g.data() + 12, "NULL", 4);
    hs.feed(g);
    ASSERT_FALSE(hs.failed());
    EXPECT_EQ(hs.session_version().major, c.session.major);
    EXPECT_EQ(hs.session_version().minor, c.session.minor);
}

INSTANTIATE_TEST_SUITE_P(Cases, SessionVersion,
                         ::testing::Values(version_case{"v31_v31", 1, 3, 1, {3, 1}},
                                           version_case{"v31_v30", 1, 3, 0, {3, 0}},
                                           version_case{"v30_v31", 0, 3, 1, {3, 0}},
                                           version_case{"v31_v35", 1, 3, 5, {3, 1}},
                                           version_case{"v31_v40", 1, 4, 0, {3, 1}}),
                         [](const auto &info) { return std::string(info.param.name); });

}  // namespace
}  // namespace zlink::wire
