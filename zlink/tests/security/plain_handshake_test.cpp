// PLAIN mechanism (RFC 24 "ZMTP-PLAIN") client and server, in memory, with ZAP
// (RFC 27) answered by the test. Byte vectors are written from the RFC grammar.
#include "wire/mechanism.hpp"
#include "wire/plain_client.hpp"
#include "wire/plain_server.hpp"

#include "../wire/test_bytes.hpp"
#include "handshake_pair.hpp"

#include <gtest/gtest.h>

#include <string>

namespace zlink::wire {
namespace {

using test::bytes;
using test::cat;
using test::handshake_pair;
using test::repeat;
using test::zap_missing;
using test::zap_status;

bytes greeting(std::string_view mech, bool as_server) {
    bytes m(mech.begin(), mech.end());
    m.resize(20, 0);
    return cat({{0xFF}, repeat(0, 8), {0x7F, 3, 1}, m, {as_server ? 1 : 0}, repeat(0, 31)});
}

// Ours: the padding carries routing id size + 1 (no routing id here), as libzmq's.
bytes our_greeting(std::string_view mech, bool as_server) {
    bytes g = greeting(mech, as_server);
    g[8] = 1;
    return g;
}

bytes command_frame(const bytes &body) {
    return cat({{0x04, static_cast<int>(body.size())}, body});
}

bytes str(std::string_view s) { return bytes(s.begin(), s.end()); }

std::string text(std::span<const std::uint8_t> s) { return {s.begin(), s.end()}; }

handshake_options dealer_opts() { return {.self = socket_type::dealer}; }

// "C:hello ... The HELLO command has the username and password in clear."
TEST(PlainClient, SendsGreetingThenHelloWithCredentials) {
    plain_client c(dealer_opts(), "admin", "secret");
    const bytes g = greeting("PLAIN", true);
    EXPECT_EQ(c.feed(g), 64u);
    const bytes ours = our_greeting("PLAIN", false);
    EXPECT_EQ(bytes(c.outgoing().begin(), c.outgoing().begin() + 64), ours);
    c.consume_outgoing(64);
    // hello = command-size "\x05HELLO" username password, each a 1-octet size + octets
    const bytes want = command_frame(cat({{5}, "HELLO", {5}, "admin", {6}, "secret"}));
    EXPECT_EQ(bytes(c.outgoing().begin(), c.outgoing().end()), want);
}

TEST(PlainServer, AnnouncesAsServer) {
    plain_server s({.self = socket_type::router});
    s.feed(greeting("PLAIN", false));
    EXPECT_EQ(bytes(s.outgoing().begin(), s.outgoing().end()), our_greeting("PLAIN", true));
}

TEST(Plain, HandshakeSucceedsWhenZapAccepts) {
    plain_client c({.self = socket_type::dealer, .routing_id = test::as_span("client-7")}, "admin",
                   "password");
    plain_server s({.self = socket_type::router});
    handshake_pair p(c, s);
    p.zap = [](const zap_request &) { return zap_status("200", "user-42"); };
    p.run();
    ASSERT_TRUE(c.done()) << to_string(c.error());
    ASSERT_TRUE(s.done()) << to_string(s.error());
    ASSERT_EQ(p.asked.size(), 1u);
    EXPECT_EQ(p.asked[0].mechanism, "PLAIN");
    ASSERT_EQ(p.asked[0].credentials.size(), 2u);
    EXPECT_EQ(text(p.asked[0].credentials[0]), "admin");
    EXPECT_EQ(text(p.asked[0].credentials[1]), "password");
    EXPECT_EQ(s.user_id(), "user-42");
    EXPECT_EQ(s.peer_socket_type(), socket_type::dealer);
    EXPECT_EQ(c.peer_socket_type(), socket_type::router);
    ASSERT_TRUE(s.peer_has_routing_id());
    EXPECT_EQ(text(s.peer_routing_id()), "client-7");
    EXPECT_EQ(s.transform(), nullptr) << "PLAIN sends frames in clear";
    EXPECT_TRUE(p.inbox(0).empty() && p.inbox(1).empty()) << "nothing left unconsumed";
}

TEST(Plain, EverySplitPointGivesTheSameResult) {
    plain_client c(dealer_opts(), "u", "p");
    plain_server s({.self = socket_type::dealer});
    handshake_pair p(c, s);
    p.chunk = 1;
    p.zap = [](const zap_request &) { return zap_status("200"); };
    p.run();
    EXPECT_TRUE(c.done());
    EXPECT_TRUE(s.done());
}

TEST(Plain, HandshakeWaitsForTheZapAnswer) {
    plain_client c(dealer_opts(), "u", "p");
    plain_server s({.self = socket_type::dealer});
    handshake_pair p(c, s);
    p.run();
    ASSERT_NE(s.zap_pending(), nullptr);
    EXPECT_FALSE(s.done());
    EXPECT_FALSE(c.done());
    EXPECT_EQ(s.feed(str("more bytes")), 0u) << "nothing consumed while ZAP is pending";
    s.zap_answer(zap_status("200"));
    EXPECT_EQ(s.zap_pending(), nullptr);
    p.run();
    EXPECT_TRUE(c.done());
    EXPECT_TRUE(s.done());
}

struct refusal {
    const char *code;
    bool error_sent;  // RFC 27 / libzmq: 300 is a temporary failure, no ERROR
};

class PlainRefused : public ::testing::TestWithParam<refusal> {};

TEST_P(PlainRefused, BothSidesSeeTheStatusCode) {
    plain_client c(dealer_opts(), "admin", "wrong");
    plain_server s({.self = socket_type::dealer});
    handshake_pair p(c, s);
    p.zap = [&](const zap_request &) { return zap_status(GetParam().code); };
    p.run();
    EXPECT_TRUE(s.failed());
    EXPECT_EQ(s.error(), wire_error::auth_failed);
    EXPECT_EQ(s.error_detail(), GetParam().code);
    EXPECT_EQ(classify_failure(s.error(), s.error_detail()).event, failure_event::auth);
    EXPECT_EQ(classify_failure(s.error(), s.error_detail()).value,
              static_cast<std::uint32_t>(std::stoi(GetParam().code)));
    if (GetParam().error_sent) {
        EXPECT_TRUE(c.failed());
        EXPECT_EQ(c.error(), wire_error::auth_failed);
        EXPECT_EQ(c.error_detail(), GetParam().code);
    } else {
        EXPECT_FALSE(c.failed()) << "300: the server just disconnects";
        EXPECT_FALSE(c.done());
    }
}

INSTANTIATE_TEST_SUITE_P(Codes, PlainRefused,
                         ::testing::Values(refusal{"300", false}, refusal{"400", true},
                                           refusal{"500", true}),
                         [](const auto &info) { return std::string("status_") + info.param.code; });

TEST(Plain, ServerWithoutZapHandlerFails) {
    plain_client c(dealer_opts(), "u", "p");
    plain_server s({.self = socket_type::dealer});
    handshake_pair p(c, s);
    p.zap = [](const zap_request &) { return zap_missing(); };
    p.run();
    EXPECT_EQ(s.error(), wire_error::no_zap_handler);
    const auto f = classify_failure(s.error(), s.error_detail());
    EXPECT_EQ(f.event, failure_event::no_detail);
    EXPECT_EQ(f.value, 14u) << "libzmq reports EFAULT";
}

TEST(Plain, InvalidZapStatusFails) {
    plain_client c(dealer_opts(), "u", "p");
    plain_server s({.self = socket_type::dealer});
    handshake_pair p(c, s);
    p.zap = [](const zap_request &) { return zap_status("201"); };
    p.run();
    EXPECT_EQ(s.error(), wire_error::zap_invalid_status_code);
}

TEST(Plain, IncompatibleSocketTypesGetAnError) {
    plain_client c({.self = socket_type::pub}, "u", "p");
    plain_server s({.self = socket_type::pair});
    handshake_pair p(c, s);
    p.zap = [](const zap_request &) { return zap_status("200"); };
    p.run();
    EXPECT_EQ(s.error(), wire_error::incompatible_socket_type);
    EXPECT_EQ(c.error(), wire_error::peer_sent_error);
    EXPECT_EQ(c.error_detail(), "Invalid socket type");
}

TEST(Plain, ClientRefusesNullServer) {
    plain_client c(dealer_opts(), "u", "p");
    const bytes g = greeting("NULL", false);
    c.feed(g);
    EXPECT_EQ(c.error(), wire_error::mechanism_mismatch);
    EXPECT_EQ(c.error_detail(), "NULL");
}

struct bad_hello {
    const char *name;
    bytes body;
    wire_error error;
};

class PlainServerRefusesHello : public ::testing::TestWithParam<bad_hello> {};

TEST_P(PlainServerRefusesHello, WithTheRightError) {
    plain_server s({.self = socket_type::dealer});
    const bytes in = cat({greeting("PLAIN", false), command_frame(GetParam().body)});
    s.feed(in);
    EXPECT_TRUE(s.failed());
    EXPECT_EQ(s.error(), GetParam().error) << to_string(s.error());
    EXPECT_EQ(s.zap_pending(), nullptr) << "no ZAP request for a malformed HELLO";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PlainServerRefusesHello,
    ::testing::Values(
        bad_hello{"no_username", cat({{5}, "HELLO"}), wire_error::malformed_hello},
        bad_hello{"username_past_end", cat({{5}, "HELLO", {9}, "abc"}),
                  wire_error::malformed_hello},
        bad_hello{"no_password", cat({{5}, "HELLO", {1}, "u"}), wire_error::malformed_hello},
        bad_hello{"password_short", cat({{5}, "HELLO", {1}, "u", {4}, "pw"}),
                  wire_error::malformed_hello},
        bad_hello{"trailing_octets", cat({{5}, "HELLO", {1}, "u", {1}, "p", "x"}),
                  wire_error::malformed_hello},
        bad_hello{"initiate_first", cat({{8}, "INITIATE"}), wire_error::unexpected_command},
        bad_hello{"ready_first", cat({{5}, "READY"}), wire_error::unexpected_command},
        bad_hello{"bad_name", cat({{5}, "HEL1O"}), wire_error::malformed_command}),
    [](const auto &info) { return std::string(info.param.name); });

TEST(PlainServer, EmptyCredentialsAreWellFormed) {
    plain_server s({.self = socket_type::dealer});
    const bytes in = cat({greeting("PLAIN", false), command_frame(cat({{5}, "HELLO", {0}, {0}}))});
    EXPECT_EQ(s.feed(in), in.size());
    ASSERT_NE(s.zap_pending(), nullptr);
    EXPECT_TRUE(s.zap_pending()->credentials[0].empty());
    EXPECT_TRUE(s.zap_pending()->credentials[1].empty());
}

TEST(PlainClient, WelcomeWithDataIsMalformed) {
    plain_client c(dealer_opts(), "u", "p");
    const bytes in = cat({greeting("PLAIN", true), command_frame(cat({{7}, "WELCOME", "x"}))});
    c.feed(in);
    EXPECT_EQ(c.error(), wire_error::malformed_welcome);
}

TEST(PlainClient, ReadyBeforeWelcomeIsUnexpected) {
    plain_client c(dealer_opts(), "u", "p");
    const bytes in = cat({greeting("PLAIN", true), command_frame(cat({{5}, "READY"}))});
    c.feed(in);
    EXPECT_EQ(c.error(), wire_error::unexpected_command);
}

// libzmq 4.3.5's PLAIN writes its ERROR name as "\x05ERROR" in C, where the hex
// escape swallows the 'E': the body starts 0x5E 'R' 'R' 'O' 'R'. Its PLAIN client
// knows only that form, so a zlink PLAIN server sends it; a zlink client takes both.
TEST(PlainServer, RefusalUsesLibzmqsErrorForm) {
    plain_server s({.self = socket_type::dealer});
    const bytes in =
        cat({greeting("PLAIN", false), command_frame(cat({{5}, "HELLO", {1}, "u", {1}, "p"}))});
    s.feed(in);
    s.consume_outgoing(s.outgoing().size());  // our greeting
    ASSERT_NE(s.zap_pending(), nullptr);
    s.zap_answer(zap_status("400"));
    EXPECT_EQ(bytes(s.outgoing().begin(), s.outgoing().end()),
              command_frame(cat({{0x5E}, "RROR", {3}, "400"})));
}

TEST(PlainClient, AcceptsBothErrorForms) {
    for (const bytes &error : {command_frame(cat({{0x5E}, "RROR", {3}, "400"})),
                               command_frame(cat({{5}, "ERROR", {3}, "400"}))}) {
        plain_client c(dealer_opts(), "u", "p");
        c.feed(cat({greeting("PLAIN", true), error}));
        EXPECT_EQ(c.error(), wire_error::auth_failed);
        EXPECT_EQ(c.error_detail(), "400");
    }
    plain_client c(dealer_opts(), "u", "p");
    c.feed(cat({greeting("PLAIN", true), command_frame(cat({{0x5E}, "RROR", {9}, "400"}))}));
    EXPECT_EQ(c.error(), wire_error::malformed_command) << "reason longer than the body";
}

TEST(PlainClient, ErrorWithOtherReasonIsPeerError) {
    plain_client c(dealer_opts(), "u", "p");
    const bytes in = cat({greeting("PLAIN", true), command_frame(cat({{5}, "ERROR", {3}, "bad"}))});
    c.feed(in);
    EXPECT_EQ(c.error(), wire_error::peer_sent_error);
    EXPECT_EQ(c.error_detail(), "bad");
}

TEST(PlainClient, MalformedErrorCommand) {
    plain_client c(dealer_opts(), "u", "p");
    const bytes in = cat({greeting("PLAIN", true), command_frame(cat({{5}, "ERROR", {9}, "400"}))});
    c.feed(in);
    EXPECT_EQ(c.error(), wire_error::malformed_error_command);
}

TEST(Plain, MessageFrameDuringHandshakeIsRefused) {
    plain_server s({.self = socket_type::dealer});
    const bytes in = cat({greeting("PLAIN", false), {0x00, 0x01, 'x'}});
    s.feed(in);
    EXPECT_EQ(s.error(), wire_error::unexpected_message);
}

TEST(Plain, HandshakeCommandOverTheLimitIsRefused) {
    plain_server s({.self = socket_type::dealer, .max_handshake_command = 16});
    const bytes in = cat(
        {greeting("PLAIN", false), command_frame(cat({{5}, "HELLO", {10}, "0123456789", {0}}))});
    s.feed(in);
    EXPECT_EQ(s.error(), wire_error::handshake_too_large);
}

}  // namespace
}  // namespace zlink::wire
