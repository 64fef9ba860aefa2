// Greeting build and parse against RFC 37 (ZMTP 3.1) and RFC 23 (ZMTP 3.0).
#include "wire/greeting.hpp"

#include "test_bytes.hpp"

#include <gtest/gtest.h>

namespace zlink::wire {
namespace {

using test::bytes;
using test::cat;
using test::repeat;

// Hand-written from the RFC 37 grammar:
// greeting = signature version mechanism as-server filler
// signature = %xFF padding %x7F ; padding = 8OCTET ; version = %x03 %x01
// mechanism = 20 null-padded chars ; as-server = %x00 ; filler = 31%x00
bytes greeting_vector(int major, int minor, std::string_view mech, int as_server = 0) {
    bytes mechanism(mech.begin(), mech.end());
    mechanism.resize(20, 0);
    return cat(
        {{0xFF}, repeat(0, 8), {0x7F}, {major, minor}, mechanism, {as_server}, repeat(0, 31)});
}

// "The greeting announces the protocol details" - 64 octets, exactly as the grammar;
// the padding carries routing id size + 1 (here 0 + 1) in network order, as libzmq
// 4.3.5 writes it for ZMTP 1.0 peers (RFC 37 forbids interpreting it).
TEST(Greeting, OurGreetingIsByteExact) {
    const auto g = make_greeting("NULL", false);
    bytes want = greeting_vector(3, 1, "NULL");
    want[8] = 1;
    ASSERT_EQ(want.size(), 64u);
    EXPECT_EQ(bytes(g.begin(), g.end()), want);
}

struct accept_case {
    const char *name;
    bytes greeting;
    zmtp_version version;
};

class GreetingAccepts : public ::testing::TestWithParam<accept_case> {};

// "A peer MUST accept higher protocol versions as valid." and RFC 23 (ZMTP 3.0)
// greetings are identical apart from version-minor = %x00.
// "A peer SHALL NOT assign any significance to the padding field and MUST NOT
// validate this nor interpret it in any way whatsoever."
TEST_P(GreetingAccepts, AtEverySplitPoint) {
    const auto &c = GetParam();
    for (std::size_t split = 0; split <= c.greeting.size(); ++split) {
        greeting_parser p;
        const std::span<const std::uint8_t> all(c.greeting);
        std::size_t used = p.feed(all.first(split));
        EXPECT_EQ(used, split);
        EXPECT_FALSE(p.failed()) << "split " << split;
        used += p.feed(all.subspan(split));
        ASSERT_TRUE(p.done()) << "split " << split << ": " << to_string(p.error());
        EXPECT_EQ(used, 64u);
        EXPECT_EQ(p.peer_version().major, c.version.major);
        EXPECT_EQ(p.peer_version().minor, c.version.minor);
        EXPECT_EQ(p.peer_mechanism(), "NULL");
    }
}

bytes with_padding(bytes g) {
    for (int i = 1; i <= 8; ++i)
        g[i] = static_cast<std::uint8_t>(0xA0 + i);
    return g;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GreetingAccepts,
    ::testing::Values(accept_case{"zmtp31", greeting_vector(3, 1, "NULL"), {3, 1}},
                      accept_case{"zmtp30", greeting_vector(3, 0, "NULL"), {3, 0}},
                      accept_case{"zmtp32_future", greeting_vector(3, 2, "NULL"), {3, 2}},
                      accept_case{"zmtp4_future", greeting_vector(4, 0, "NULL"), {4, 0}},
                      accept_case{
                          "padding_ignored", with_padding(greeting_vector(3, 1, "NULL")), {3, 1}},
                      // libzmq sets padding octet 8 to 1 (ZMTP 1.0 pseudo-size) when it
                      // wants backwards detection; must be accepted.
                      accept_case{"libzmq_style_padding",
                                  [] {
                                      auto g = greeting_vector(3, 1, "NULL");
                                      g[8] = 1;
                                      return g;
                                  }(),
                                  {3, 1}}),
    [](const auto &info) { return std::string(info.param.name); });

TEST(Greeting, ZeroFeedConsumesNothing) {
    greeting_parser p;
    EXPECT_EQ(p.feed({}), 0u);
    EXPECT_EQ(p.bytes_needed(), 64u);
}

TEST(Greeting, ExtraBytesAfterGreetingAreLeftForTheFrameDecoder) {
    // "Following the greeting, which has a fixed size of 64 octets, all further data
    // is sent as frames"
    bytes in = greeting_vector(3, 1, "NULL");
    in.insert(in.end(), {0x04, 0x00});
    greeting_parser p;
    EXPECT_EQ(p.feed(in), 64u);
    EXPECT_TRUE(p.done());
    EXPECT_EQ(p.feed(in), 0u);
}

struct reject_case {
    const char *name;
    bytes greeting;
    wire_error error;
    std::size_t consumed;  // octets taken before refusing (refuse as early as possible)
};

class GreetingRejects : public ::testing::TestWithParam<reject_case> {};

TEST_P(GreetingRejects, WithClearError) {
    const auto &c = GetParam();
    greeting_parser p;
    EXPECT_EQ(p.feed(c.greeting), c.consumed);
    ASSERT_TRUE(p.failed());
    EXPECT_EQ(p.error(), c.error) << to_string(p.error());
    EXPECT_FALSE(p.done());
    EXPECT_EQ(p.feed(c.greeting), 0u) << "a failed parser takes no more input";
    EXPECT_NE(std::string(to_string(c.error)).size(), 0u);
}

// Byte-by-byte feeding must reach the same verdict at the same octet.
TEST_P(GreetingRejects, ByteByByte) {
    const auto &c = GetParam();
    greeting_parser p;
    std::size_t used = 0;
    for (std::size_t i = 0; i < c.greeting.size() && !p.failed(); ++i)
        used += p.feed(std::span(c.greeting).subspan(i, 1));
    EXPECT_EQ(used, c.consumed);
    EXPECT_EQ(p.error(), c.error);
}

bytes zmtp1_identity_frame() {
    // ZMTP 1.0 starts with a short frame: length octet (1 + identity size), flags.
    return cat({{0x01, 0x00}, repeat(0, 62)});
}

bytes zmtp1_long_length() {
    // ZMTP 1.0 long length: %xFF then 8 octets, the last with bit 0 clear.
    return cat({{0xFF}, repeat(0, 8), {0x7E}, repeat(0, 54)});
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GreetingRejects,
    ::testing::Values(
        // "If this first octet is not %FF, then the other peer is using ZMTP 1.0"
        reject_case{"zmtp10_short", zmtp1_identity_frame(), wire_error::bad_signature, 1},
        // "If the least significant bit is 0, then the other peer is using ZMTP 1.0"
        reject_case{"zmtp10_long", zmtp1_long_length(), wire_error::bad_signature, 10},
        // "If this is 1 or 2, we have a ZMTP 2.0 peer." (zlink does not downgrade:
        // "If a peer cannot downgrade its protocol to match its peer, it MUST close
        // the connection.")
        reject_case{"zmtp20_v1", greeting_vector(1, 0, ""), wire_error::unsupported_version, 11},
        reject_case{"zmtp20_v2", greeting_vector(2, 0, ""), wire_error::unsupported_version, 11},
        // "If the mechanism that the peer received does not exactly match the
        // mechanism it sent, it MUST close the connection."
        reject_case{"curve", greeting_vector(3, 1, "CURVE"), wire_error::mechanism_mismatch, 32},
        reject_case{"plain", greeting_vector(3, 1, "PLAIN"), wire_error::mechanism_mismatch, 32},
        reject_case{"null_prefix", greeting_vector(3, 1, "NULLX"), wire_error::mechanism_mismatch,
                    32},
        reject_case{"empty_mechanism", greeting_vector(3, 1, ""), wire_error::mechanism_mismatch,
                    32},
        // mechanism-char = "A"-"Z" | DIGIT | "-" | "_" | "." | "+" | %x0
        reject_case{"lowercase_mechanism", greeting_vector(3, 1, "null"),
                    wire_error::malformed_mechanism, 13},
        reject_case{"http_request", cat({"GET / HTTP/1.1\r\n", repeat('x', 48)}),
                    wire_error::bad_signature, 1},
        // major 255 is a "higher version" (accepted); %xFF is no mechanism-char.
        reject_case{"all_ff", repeat(0xFF, 64), wire_error::malformed_mechanism, 13}),
    [](const auto &info) { return std::string(info.param.name); });

TEST(Greeting, MismatchKeepsPeerMechanismForTheLog) {
    greeting_parser p;
    p.feed(greeting_vector(3, 1, "CURVE"));
    EXPECT_EQ(p.peer_mechanism(), "CURVE");
}

// "A 3.0 peer gets subscriptions in the message form": version helper.
TEST(Greeting, SubscribeCommandsFrom31On) {
    EXPECT_FALSE((zmtp_version{3, 0}).has_subscribe_commands());
    EXPECT_TRUE((zmtp_version{3, 1}).has_subscribe_commands());
    EXPECT_TRUE((zmtp_version{3, 7}).has_subscribe_commands());
    EXPECT_TRUE((zmtp_version{4, 0}).has_subscribe_commands());
}

}  // namespace
}  // namespace zlink::wire
