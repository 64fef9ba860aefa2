// NULL mechanism with ZAP (RFC 27, as libzmq 4.3.5 applies it to NULL): asked
// only when the socket has a ZAP domain; READY waits for the answer.
#include "wire/mechanism.hpp"
#include "wire/null_handshake.hpp"

#include "handshake_pair.hpp"

#include <gtest/gtest.h>

namespace zlink::wire {
namespace {

using test::handshake_pair;
using test::zap_missing;
using test::zap_status;

const handshake_options pair_opts{.self = socket_type::pair};

TEST(NullZap, NoDomainNoRequest) {
    null_handshake a(pair_opts), b(pair_opts);
    handshake_pair p(a, b);
    bool asked = false;
    p.zap = [&](const zap_request &) {
        asked = true;
        return zap_status("400");
    };
    p.run();
    EXPECT_FALSE(asked);
    EXPECT_TRUE(a.done() && b.done());
}

TEST(NullZap, DomainAsksBeforeReady) {
    null_handshake client(pair_opts), server(pair_opts, {.domain_set = true});
    handshake_pair p(client, server);
    p.run();
    ASSERT_NE(server.zap_pending(), nullptr);
    EXPECT_EQ(server.zap_pending()->mechanism, "NULL");
    EXPECT_TRUE(server.zap_pending()->credentials.empty());
    EXPECT_EQ(server.outgoing().size(), 0u) << "greeting sent, READY held back";
    EXPECT_FALSE(client.done());
    server.zap_answer(zap_status("200", "anonymous"));
    p.run();
    EXPECT_TRUE(client.done());
    EXPECT_TRUE(server.done());
    EXPECT_EQ(server.user_id(), "anonymous");
}

TEST(NullZap, RefusalSendsTheStatusCode) {
    for (const char *code : {"400", "500"}) {
        null_handshake client(pair_opts), server(pair_opts, {.domain_set = true});
        handshake_pair p(client, server);
        p.zap = [&](const zap_request &) { return zap_status(code); };
        p.run();
        EXPECT_EQ(server.error(), wire_error::auth_failed);
        EXPECT_EQ(client.error(), wire_error::auth_failed)
            << "client reads the ERROR's status code";
        EXPECT_EQ(client.error_detail(), code);
        const auto f = classify_failure(client.error(), client.error_detail());
        EXPECT_EQ(f.event, failure_event::auth);
        EXPECT_EQ(f.value, code[0] == '4' ? 400u : 500u);
    }
}

TEST(NullZap, TemporaryFailureSendsNothing) {
    null_handshake client(pair_opts), server(pair_opts, {.domain_set = true});
    handshake_pair p(client, server);
    p.zap = [](const zap_request &) { return zap_status("300"); };
    p.run();
    EXPECT_EQ(server.error(), wire_error::auth_failed);
    EXPECT_FALSE(client.failed());
    EXPECT_FALSE(client.done());
}

TEST(NullZap, MissingHandler) {
    for (bool enforce : {false, true}) {
        null_handshake client(pair_opts),
            server(pair_opts, {.domain_set = true, .enforce_domain = enforce});
        handshake_pair p(client, server);
        p.zap = [](const zap_request &) { return zap_missing(); };
        p.run();
        if (enforce) {
            EXPECT_EQ(server.error(), wire_error::no_zap_handler);
        } else {
            EXPECT_TRUE(server.done()) << "no handler, not enforced: libzmq goes on";
            EXPECT_TRUE(client.done());
        }
    }
}

TEST(NullZap, FactoryPassesThePolicy) {
    security_config sec;
    sec.zap.domain_set = true;
    auto server = make_handshake(pair_opts, sec);
    null_handshake client(pair_opts);
    handshake_pair p(client, *server);
    p.run();
    ASSERT_NE(server->zap_pending(), nullptr);
    EXPECT_STREQ(server->mechanism(), "NULL");
}

}  // namespace
}  // namespace zlink::wire
