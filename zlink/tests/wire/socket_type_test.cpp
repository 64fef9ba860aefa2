// Socket-Type names and the compatibility table of RFC 37.
#include "wire/socket_type.hpp"

#include <gtest/gtest.h>

#include <set>
#include <utility>

namespace zlink::wire {
namespace {

using st = socket_type;

// "The peer SHOULD enforce that the other peer is using a valid socket type. This
// table shows the legal combinations" - the whole table, both directions, and every
// pair not listed must be refused.
TEST(SocketType, CompatibilityTableIsExactlyTheRfcTable) {
    const std::set<std::pair<st, st>> legal = {
        {st::req, st::rep},       {st::req, st::router}, {st::rep, st::req},
        {st::rep, st::dealer},    {st::dealer, st::rep}, {st::dealer, st::dealer},
        {st::dealer, st::router}, {st::router, st::req}, {st::router, st::dealer},
        {st::router, st::router}, {st::pub, st::sub},    {st::pub, st::xsub},
        {st::xpub, st::sub},      {st::xpub, st::xsub},  {st::sub, st::pub},
        {st::sub, st::xpub},      {st::xsub, st::pub},   {st::xsub, st::xpub},
        {st::push, st::pull},     {st::pull, st::push},  {st::pair, st::pair},
    };
    for (int a = 0; a <= 11; ++a)
        for (int b = 0; b <= 11; ++b) {
            const auto x = static_cast<st>(a), y = static_cast<st>(b);
            EXPECT_EQ(compatible(x, y), legal.count({x, y}) == 1)
                << socket_type_name(x) << "-" << socket_type_name(y);
            EXPECT_EQ(compatible(x, y), compatible(y, x)) << "table is symmetric";
        }
}

// "socket-type = "REQ" | "REP" | "DEALER" | "ROUTER" | "PUB" | "XPUB" | "SUB" | "XSUB"
// | "PUSH" | "PULL" | "PAIR" ..."
TEST(SocketType, NamesRoundTrip) {
    for (int a = 0; a <= 10; ++a) {
        const auto t = static_cast<st>(a);
        const auto parsed = parse_socket_type(socket_type_name(t));
        ASSERT_TRUE(parsed.has_value()) << socket_type_name(t);
        EXPECT_EQ(*parsed, t);
    }
    EXPECT_EQ(socket_type_name(st::dealer), "DEALER");
    EXPECT_EQ(static_cast<int>(st::stream), 11);  // ZMQ_STREAM
}

TEST(SocketType, UnknownAndStreamNamesDoNotParse) {
    for (const char *n : {"STREAM", "dealer", "", "CLIENT", "RADIO", "PAIRX", "PAI"})
        EXPECT_FALSE(parse_socket_type(n).has_value()) << n;
}

// "STREAM is raw (no ZMTP)"; "A REQ, DEALER, or ROUTER peer ... MAY announce its identity"
TEST(SocketType, StreamAndIdentityRules) {
    EXPECT_FALSE(speaks_zmtp(st::stream));
    EXPECT_TRUE(speaks_zmtp(st::pair));
    for (int a = 0; a <= 11; ++a) {
        const auto t = static_cast<st>(a);
        EXPECT_EQ(sends_identity(t), t == st::req || t == st::dealer || t == st::router);
    }
}

}  // namespace
}  // namespace zlink::wire
