// CURVE mechanism (RFC 26 CurveZMQ, RFC 25 ZMTP-CURVE) client and server in
// memory, plus an independent client written here from the RFC with libsodium's
// classic NaCl calls (zero-padded boxes), so the server is checked against a
// second encoding of every command, and commands can be forged.
#include "wire/curve_client.hpp"
#include "wire/curve_server.hpp"
#include "wire/mechanism.hpp"

#include "../wire/test_bytes.hpp"
#include "handshake_pair.hpp"

#include <gtest/gtest.h>
#include <sodium.h>

#include <cstring>
#include <string>

namespace zlink::wire {
namespace {

using test::bytes;
using test::cat;
using test::handshake_pair;
using test::repeat;
using test::zap_missing;
using test::zap_status;

struct keypair {
    curve_key pub{}, sec{};
    keypair() { curve_box::keypair(pub, sec); }
};

bytes greeting(bool as_server) {
    bytes m{'C', 'U', 'R', 'V', 'E'};
    m.resize(20, 0);
    return cat({{0xFF}, repeat(0, 8), {0x7F, 3, 1}, m, {as_server ? 1 : 0}, repeat(0, 31)});
}

bytes frame(const bytes &body) {
    bytes h{0x04};
    if (body.size() <= 255) {
        h.push_back(static_cast<std::uint8_t>(body.size()));
    } else {
        h[0] = 0x06;
        for (int i = 7; i >= 0; --i)
            h.push_back(static_cast<std::uint8_t>(body.size() >> (8 * i)));
    }
    return cat({h, body});
}

// NaCl's crypto_box: 32 zero octets before the plaintext, 16 before the box.
bytes nacl_box(const bytes &plain, const std::uint8_t *nonce, const curve_key &pk,
               const curve_key &sk) {
    bytes m(32 + plain.size(), 0), c(m.size());
    std::copy(plain.begin(), plain.end(), m.begin() + 32);
    EXPECT_EQ(crypto_box(c.data(), m.data(), m.size(), nonce, pk.data(), sk.data()), 0);
    return bytes(c.begin() + 16, c.end());
}

bool nacl_open(bytes &plain, std::span<const std::uint8_t> box, const std::uint8_t *nonce,
               const curve_key &pk, const curve_key &sk) {
    bytes c(16 + box.size(), 0), m(c.size());
    std::copy(box.begin(), box.end(), c.begin() + 16);
    if (crypto_box_open(m.data(), c.data(), c.size(), nonce, pk.data(), sk.data()) != 0)
        return false;
    plain.assign(m.begin() + 32, m.end());
    return true;
}

bytes nonce_of(std::string_view prefix, std::uint64_t n) {
    bytes b(prefix.begin(), prefix.end());
    for (int i = 7; i >= 0; --i)
        b.push_back(static_cast<std::uint8_t>(n >> (8 * i)));
    return b;
}

// A CurveZMQ client written from RFC 26 section "The Handshake", for forging.
struct rfc_client {
    keypair longterm, shortterm;
    curve_key server{};
    std::uint64_t nonce = 1;

    bytes hello(std::uint8_t major = 1, std::uint8_t minor = 0) {
        const bytes n = nonce_of("CurveZMQHELLO---", nonce++);
        const bytes box = nacl_box(bytes(64, 0), n.data(), server, shortterm.sec);
        return cat({{5},
                    "HELLO",
                    {major, minor},
                    repeat(0, 72),
                    bytes(shortterm.pub.begin(), shortterm.pub.end()),
                    bytes(n.begin() + 16, n.end()),
                    box});
    }

    // Returns S' and the cookie from a WELCOME body, or false.
    bool welcome(std::span<const std::uint8_t> body, curve_key &server_short, bytes &cookie) {
        if (body.size() != 168)
            return false;
        const bytes n = cat({"WELCOME-", bytes(body.begin() + 8, body.begin() + 24)});
        bytes plain;
        if (!nacl_open(plain, body.subspan(24), n.data(), server, shortterm.sec))
            return false;
        std::copy(plain.begin(), plain.begin() + 32, server_short.begin());
        cookie.assign(plain.begin() + 32, plain.end());
        return true;
    }

    bytes initiate(const curve_key &server_short, const bytes &cookie, const bytes &props,
                   const curve_key *vouched_short = nullptr) {
        const curve_key &cp = vouched_short ? *vouched_short : shortterm.pub;
        const bytes vouch_nonce = cat({"VOUCH---", repeat(0x5A, 16)});
        const bytes vouch =
            nacl_box(cat({bytes(cp.begin(), cp.end()), bytes(server.begin(), server.end())}),
                     vouch_nonce.data(), server_short, longterm.sec);
        const bytes plain = cat({bytes(longterm.pub.begin(), longterm.pub.end()),
                                 bytes(vouch_nonce.begin() + 8, vouch_nonce.end()), vouch, props});
        const bytes n = nonce_of("CurveZMQINITIATE", nonce++);
        return cat({{8},
                    "INITIATE",
                    cookie,
                    bytes(n.begin() + 16, n.end()),
                    nacl_box(plain, n.data(), server_short, shortterm.sec)});
    }
};

bytes dealer_props() { return cat({{11}, "Socket-Type", {0, 0, 0, 6}, "DEALER"}); }

// The command bodies of the frames in `out` from octet `at` on.
std::vector<bytes> command_bodies(std::span<const std::uint8_t> out, std::size_t at = 0) {
    std::vector<bytes> cmds;
    while (at + 2 <= out.size()) {
        std::size_t size = out[at + 1], h = 2;
        if (out[at] & 0x02) {
            size = 0;
            for (int i = 1; i <= 8; ++i)
                size = (size << 8) | out[at + i];
            h = 9;
        }
        cmds.emplace_back(out.begin() + static_cast<std::ptrdiff_t>(at + h),
                          out.begin() + static_cast<std::ptrdiff_t>(at + h + size));
        at += h + size;
    }
    return cmds;
}

std::vector<bytes> commands_after_greeting(std::span<const std::uint8_t> out) {
    return command_bodies(out, greeting_size);
}

bytes frame_body_of_first(std::span<const std::uint8_t> out) {
    const auto cmds = command_bodies(out);
    return cmds.empty() ? bytes{} : cmds[0];
}

class Curve : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_TRUE(curve_box::ready()); }
    keypair server_keys, client_keys;

    curve_client client(const curve_key *server_key = nullptr) {
        return curve_client({.self = socket_type::dealer, .routing_id = test::as_span("id-1")},
                            client_keys.pub, client_keys.sec,
                            server_key ? *server_key : server_keys.pub);
    }
    curve_server server(zap_policy zap = {}) {
        return curve_server({.self = socket_type::router}, server_keys.sec, zap);
    }

    // Runs an rfc_client's HELLO through a server; returns the WELCOME body.
    bytes hello_to(curve_server &s, rfc_client &rc) {
        rc.server = server_keys.pub;
        const bytes in = cat({greeting(false), frame(rc.hello())});
        EXPECT_EQ(s.feed(in), in.size());
        const auto cmds = commands_after_greeting(s.outgoing());
        EXPECT_EQ(cmds.size(), 1u);
        return cmds.empty() ? bytes{} : cmds[0];
    }
};

TEST_F(Curve, HandshakeSucceedsAndCarriesMessagesBothWays) {
    auto c = client();
    auto s = server();
    handshake_pair p(c, s);
    p.zap = [](const zap_request &) { return zap_status("200", "alice"); };
    p.run();
    ASSERT_TRUE(c.done()) << to_string(c.error()) << " " << c.error_detail();
    ASSERT_TRUE(s.done()) << to_string(s.error()) << " " << s.error_detail();
    ASSERT_EQ(p.asked.size(), 1u);
    EXPECT_EQ(p.asked[0].mechanism, "CURVE");
    ASSERT_EQ(p.asked[0].credentials.size(), 1u);
    EXPECT_EQ(p.asked[0].credentials[0], bytes(client_keys.pub.begin(), client_keys.pub.end()))
        << "ZAP gets the client's long-term public key";
    EXPECT_EQ(s.user_id(), "alice");
    EXPECT_EQ(s.peer_socket_type(), socket_type::dealer);
    EXPECT_EQ(c.peer_socket_type(), socket_type::router);
    ASSERT_TRUE(s.peer_has_routing_id());
    EXPECT_EQ(std::string(s.peer_routing_id().begin(), s.peer_routing_id().end()), "id-1");
    ASSERT_NE(c.transform(), nullptr);
    ASSERT_NE(s.transform(), nullptr);

    bytes wire;
    ASSERT_EQ(c.transform()->seal(frame_flag::more, test::as_span("hello"), wire),
              wire_error::none);
    std::uint8_t flags = 0;
    bytes got;
    ASSERT_EQ(s.transform()->open(std::span(wire).subspan(2), flags, got), wire_error::none);
    EXPECT_EQ(flags, frame_flag::more);
    EXPECT_EQ(std::string(got.begin(), got.end()), "hello");
    wire.clear();
    ASSERT_EQ(s.transform()->seal(0, test::as_span("back"), wire), wire_error::none);
    ASSERT_EQ(c.transform()->open(std::span(wire).subspan(2), flags, got), wire_error::none);
    EXPECT_EQ(std::string(got.begin(), got.end()), "back");
}

TEST_F(Curve, EverySplitPointGivesTheSameResult) {
    auto c = client();
    auto s = server();
    handshake_pair p(c, s);
    p.chunk = 1;
    p.zap = [](const zap_request &) { return zap_status("200"); };
    p.run();
    EXPECT_TRUE(c.done());
    EXPECT_TRUE(s.done());
}

TEST_F(Curve, NoHandlerAndNoEnforcementMeansEncryptionOnly) {
    auto c = client();
    auto s = server({.domain_set = true, .enforce_domain = false});
    handshake_pair p(c, s);
    p.zap = [](const zap_request &) { return zap_missing(); };
    p.run();
    EXPECT_TRUE(c.done());
    EXPECT_TRUE(s.done());
    EXPECT_EQ(s.user_id(), "");
}

TEST_F(Curve, NoHandlerWithEnforcedDomainFails) {
    auto c = client();
    auto s = server({.domain_set = true, .enforce_domain = true});
    handshake_pair p(c, s);
    p.zap = [](const zap_request &) { return zap_missing(); };
    p.run();
    EXPECT_EQ(s.error(), wire_error::no_zap_handler);
    EXPECT_FALSE(c.done());
}

TEST_F(Curve, EnforcedWithoutDomainNeverAsksZap) {
    auto c = client();
    auto s = server({.domain_set = false, .enforce_domain = true});
    handshake_pair p(c, s);
    bool asked = false;
    p.zap = [&](const zap_request &) {
        asked = true;
        return zap_status("400");
    };
    p.run();
    EXPECT_FALSE(asked);
    EXPECT_TRUE(s.done());
    EXPECT_TRUE(c.done());
}

TEST_F(Curve, ZapRefusalReachesTheClient) {
    auto c = client();
    auto s = server();
    handshake_pair p(c, s);
    p.zap = [](const zap_request &) { return zap_status("400"); };
    p.run();
    EXPECT_EQ(s.error(), wire_error::auth_failed);
    EXPECT_EQ(c.error(), wire_error::auth_failed);
    EXPECT_EQ(c.error_detail(), "400");
    EXPECT_EQ(c.transform(), nullptr);
}

TEST_F(Curve, TemporaryZapFailureDisconnectsSilently) {
    auto c = client();
    auto s = server();
    handshake_pair p(c, s);
    p.zap = [](const zap_request &) { return zap_status("300"); };
    p.run();
    EXPECT_EQ(s.error(), wire_error::auth_failed);
    EXPECT_EQ(s.error_detail(), "300");
    EXPECT_FALSE(c.failed());
    EXPECT_TRUE(s.outgoing().empty()) << "no ERROR for 300";
}

TEST_F(Curve, ClientWithWrongServerKeyIsRefused) {
    keypair other;
    auto c = client(&other.pub);
    auto s = server();
    handshake_pair p(c, s);
    p.zap = [](const zap_request &) { return zap_status("200"); };
    p.run();
    EXPECT_EQ(s.error(), wire_error::cryptographic);
    EXPECT_EQ(classify_failure(s.error(), {}).value, 0x11000001u)
        << "ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC";
    EXPECT_FALSE(c.done());
}

TEST_F(Curve, ServerAcceptsAnIndependentRfcClient) {
    auto s = server();
    rfc_client rc;
    const bytes welcome = hello_to(s, rc);
    curve_key server_short{};
    bytes cookie;
    ASSERT_TRUE(rc.welcome(welcome, server_short, cookie))
        << "WELCOME opens with NaCl's crypto_box_open";
    EXPECT_EQ(cookie.size(), 96u);
    s.consume_outgoing(s.outgoing().size());
    const bytes init = frame(rc.initiate(server_short, cookie, dealer_props()));
    ASSERT_EQ(s.feed(init), init.size());
    ASSERT_NE(s.zap_pending(), nullptr);
    EXPECT_EQ(s.zap_pending()->credentials[0],
              bytes(rc.longterm.pub.begin(), rc.longterm.pub.end()));
    s.zap_answer(zap_status("200"));
    ASSERT_TRUE(s.done()) << to_string(s.error());
    // READY = %d5 "READY" nonce(8) Box[props](S'->C'), nonce "CurveZMQREADY---" + 1.
    const bytes ready = frame_body_of_first(s.outgoing());
    ASSERT_EQ(std::string(ready.begin(), ready.begin() + 6), "\x05READY");
    EXPECT_EQ(curve_box::load_u64(ready.data() + 6), 1u);
    bytes props;
    const bytes n = nonce_of("CurveZMQREADY---", 1);
    ASSERT_TRUE(
        nacl_open(props, std::span(ready).subspan(14), n.data(), server_short, rc.shortterm.sec));
    std::span<const std::uint8_t> type;
    ASSERT_TRUE(find_property(props, "Socket-Type", type));
    EXPECT_EQ(std::string(type.begin(), type.end()), "ROUTER");
}

TEST_F(Curve, VouchForAnotherShortTermKeyIsAKeyExchangeFailure) {
    auto s = server();
    rfc_client rc;
    curve_key server_short{};
    bytes cookie;
    ASSERT_TRUE(rc.welcome(hello_to(s, rc), server_short, cookie));
    keypair stranger;
    s.feed(frame(rc.initiate(server_short, cookie, dealer_props(), &stranger.pub)));
    EXPECT_EQ(s.error(), wire_error::key_exchange);
    EXPECT_EQ(s.zap_pending(), nullptr);
}

TEST_F(Curve, InitiateReplayedOnAnotherConnectionIsRefused) {
    // An eavesdropper replays connection 1's whole INITIATE (cookie and box) on
    // connection 2. Each WELCOME draws a fresh cookie key, so s2 cannot open it.
    auto s1 = server();
    auto s2 = server();
    rfc_client rc1, rc2;
    curve_key short1{}, short2{};
    bytes cookie1, cookie2;
    ASSERT_TRUE(rc1.welcome(hello_to(s1, rc1), short1, cookie1));
    ASSERT_TRUE(rc2.welcome(hello_to(s2, rc2), short2, cookie2));
    const bytes initiate1 = frame(rc1.initiate(short1, cookie1, dealer_props()));
    s2.feed(initiate1);
    EXPECT_EQ(s2.error(), wire_error::cryptographic);
    s1.feed(initiate1);
    EXPECT_NE(s1.zap_pending(), nullptr) << "the same INITIATE is good on its own connection";
}

TEST_F(Curve, TamperedCookieIsRefused) {
    auto s = server();
    rfc_client rc;
    curve_key server_short{};
    bytes cookie;
    ASSERT_TRUE(rc.welcome(hello_to(s, rc), server_short, cookie));
    cookie[40] ^= 1;
    s.feed(frame(rc.initiate(server_short, cookie, dealer_props())));
    EXPECT_EQ(s.error(), wire_error::cryptographic);
}

TEST_F(Curve, InitiateNonceMustFollowHello) {
    auto s = server();
    rfc_client rc;
    curve_key server_short{};
    bytes cookie;
    ASSERT_TRUE(rc.welcome(hello_to(s, rc), server_short, cookie));
    rc.nonce = 1;  // HELLO used 1 already
    s.feed(frame(rc.initiate(server_short, cookie, dealer_props())));
    EXPECT_EQ(s.error(), wire_error::invalid_sequence);
}

TEST_F(Curve, BadMetadataInInitiateIsRefused) {
    auto s = server();
    rfc_client rc;
    curve_key server_short{};
    bytes cookie;
    ASSERT_TRUE(rc.welcome(hello_to(s, rc), server_short, cookie));
    s.feed(
        frame(rc.initiate(server_short, cookie, cat({{11}, "Socket-Type", {0, 0, 0, 9}, "DEAL"}))));
    EXPECT_EQ(s.error(), wire_error::malformed_metadata);
}

TEST_F(Curve, IncompatibleSocketTypeGetsAnErrorInClear) {
    auto s = server();
    rfc_client rc;
    curve_key server_short{};
    bytes cookie;
    ASSERT_TRUE(rc.welcome(hello_to(s, rc), server_short, cookie));
    s.consume_outgoing(s.outgoing().size());
    s.feed(
        frame(rc.initiate(server_short, cookie, cat({{11}, "Socket-Type", {0, 0, 0, 3}, "SUB"}))));
    EXPECT_EQ(s.error(), wire_error::incompatible_socket_type);
    const auto cmds = frame_body_of_first(s.outgoing());
    EXPECT_EQ(std::string(cmds.begin(), cmds.begin() + 6), "\x05"
                                                           "ERROR");
}

struct bad_hello {
    const char *name;
    std::size_t size;
    std::uint8_t major, minor;
    wire_error error;
};

class CurveServerRefusesHello : public Curve, public ::testing::WithParamInterface<bad_hello> {};

TEST_P(CurveServerRefusesHello, WithTheRightError) {
    auto s = server();
    rfc_client rc;
    rc.server = server_keys.pub;
    bytes hello = rc.hello(GetParam().major, GetParam().minor);
    hello.resize(GetParam().size, 0);
    s.feed(cat({greeting(false), frame(hello)}));
    EXPECT_EQ(s.error(), GetParam().error) << to_string(s.error());
    EXPECT_EQ(classify_failure(s.error(), {}).value,
              GetParam().error == wire_error::malformed_hello ? 0x10000013u : 0x11000001u);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CurveServerRefusesHello,
    ::testing::Values(bad_hello{"short", 199, 1, 0, wire_error::malformed_hello},
                      bad_hello{"long", 201, 1, 0, wire_error::malformed_hello},
                      bad_hello{"version_2_0", 200, 2, 0, wire_error::malformed_hello},
                      bad_hello{"version_1_1", 200, 1, 1, wire_error::malformed_hello},
                      bad_hello{"truncated_box", 180, 1, 0, wire_error::malformed_hello}),
    [](const auto &info) { return std::string(info.param.name); });

TEST_F(Curve, ServerRefusesInitiateBeforeHello) {
    auto s = server();
    s.feed(cat({greeting(false), frame(cat({{8}, "INITIATE", repeat(0, 300)}))}));
    EXPECT_EQ(s.error(), wire_error::unexpected_command);
}

TEST_F(Curve, ServerRefusesShortInitiate) {
    auto s = server();
    rfc_client rc;
    hello_to(s, rc);
    s.feed(frame(cat({{8}, "INITIATE", repeat(0, 247)})));  // 256 octets, one short
    EXPECT_EQ(s.error(), wire_error::malformed_initiate);
}

TEST_F(Curve, ClientHelloIsLaidOutAsTheRfcSays) {
    auto c = client();
    const bytes g = greeting(true);
    c.feed(g);
    c.consume_outgoing(greeting_size);
    const auto out = c.outgoing();
    ASSERT_EQ(out.size(), 2u + 200u);
    EXPECT_EQ(out[0], 0x04);
    EXPECT_EQ(out[1], 200);
    const bytes hello(out.begin() + 2, out.end());
    EXPECT_EQ(std::string(hello.begin(), hello.begin() + 8), std::string("\x05HELLO\x01\x00", 8));
    EXPECT_EQ(bytes(hello.begin() + 8, hello.begin() + 80), repeat(0, 72))
        << "anti-amplification padding";
    EXPECT_EQ(curve_box::load_u64(hello.data() + 112), 1u);
    curve_key client_short{};
    std::copy(hello.begin() + 80, hello.begin() + 112, client_short.begin());
    bytes zeros;
    const bytes n = nonce_of("CurveZMQHELLO---", 1);
    ASSERT_TRUE(
        nacl_open(zeros, std::span(hello).subspan(120), n.data(), client_short, server_keys.sec));
    EXPECT_EQ(zeros, repeat(0, 64));
}

TEST_F(Curve, ClientRefusesWelcomeOfTheWrongSize) {
    auto c = client();
    c.feed(cat({greeting(true), frame(cat({{7}, "WELCOME", repeat(0, 159)}))}));
    EXPECT_EQ(c.error(), wire_error::cryptographic) << "as libzmq reports it";
}

TEST_F(Curve, ClientRefusesTamperedWelcome) {
    auto c = client();
    auto s = server();
    s.feed(cat({greeting(false)}));
    // Drive the real HELLO to the server, then flip one octet of its WELCOME box.
    c.feed(greeting(true));
    c.consume_outgoing(greeting_size);
    const bytes hello(c.outgoing().begin(), c.outgoing().end());
    s.feed(hello);
    bytes out(s.outgoing().begin() + greeting_size, s.outgoing().end());
    out[2 + 100] ^= 0x10;
    c.feed(out);
    EXPECT_EQ(c.error(), wire_error::cryptographic);
}

TEST_F(Curve, ClientRefusesShortReady) {
    auto c = client();
    auto s = server();
    handshake_pair p(c, s);
    p.run();  // stops with the server waiting for ZAP: the client awaits READY
    ASSERT_NE(s.zap_pending(), nullptr);
    c.feed(frame(cat({{5}, "READY", repeat(0, 23)})));
    EXPECT_EQ(c.error(), wire_error::malformed_ready);
}

TEST_F(Curve, ClientRefusesForgedReady) {
    auto c = client();
    auto s = server();
    handshake_pair p(c, s);
    p.run();
    c.feed(frame(cat({{5}, "READY", {0, 0, 0, 0, 0, 0, 0, 1}, repeat(0x33, 40)})));
    EXPECT_EQ(c.error(), wire_error::cryptographic);
}

}  // namespace
}  // namespace zlink::wire
