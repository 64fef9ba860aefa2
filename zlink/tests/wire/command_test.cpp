// Command bodies: READY metadata, ERROR, PING/PONG, SUBSCRIBE/CANCEL and the ZMTP
// 3.0 subscription-message form.
#include "wire/command.hpp"

#include "test_bytes.hpp"

#include <gtest/gtest.h>

namespace zlink::wire {
namespace {

using test::as_span;
using test::bytes;
using test::cat;
using test::repeat;

// The RFC 37 "Worked Example": a DEALER's READY with Socket-Type "DEALER" and an
// empty Identity, 41-octet body, transcribed octet by octet from the spec's diagram.
const bytes rfc_dealer_ready = cat({{0x04, 41, 0x05},
                                    "READY",
                                    {11},
                                    "Socket-Type",
                                    {0, 0, 0, 6},
                                    "DEALER",
                                    {8},
                                    "Identity",
                                    {0, 0, 0, 0}});

TEST(Ready, DealerMatchesTheRfcWorkedExample) {
    bytes out(ready_frame_size(socket_type::dealer, {}));
    ASSERT_EQ(out.size(), rfc_dealer_ready.size());
    ASSERT_EQ(write_ready_frame(out, socket_type::dealer, {}), out.size());
    EXPECT_EQ(out, rfc_dealer_ready);
}

// "The server ... replies with a READY command that contains only the Socket-Type
// property" - 28-octet body. (libzmq adds Identity for ROUTER; we do the same for
// interop, so use PUB - a type that never sends Identity - for the 28-octet shape.)
TEST(Ready, TypesWithoutIdentitySendOnlySocketType) {
    const bytes want = cat({{0x04, 25, 0x05}, "READY", {11}, "Socket-Type", {0, 0, 0, 3}, "PUB"});
    bytes out(ready_frame_size(socket_type::pub, as_span("ignored")));
    ASSERT_EQ(write_ready_frame(out, socket_type::pub, as_span("ignored")), want.size());
    EXPECT_EQ(out, want);
}

TEST(Ready, IdentityAndExtraPropertiesInOrder) {
    const bytes value = {'v', 0, 'w'};
    const property_view extra[] = {{"X-Hello", value}};
    const bytes body = cat({{0x05},
                            "READY",
                            {11},
                            "Socket-Type",
                            {0, 0, 0, 6},
                            "ROUTER",
                            {8},
                            "Identity",
                            {0, 0, 0, 2},
                            "id",
                            {7},
                            "X-Hello",
                            {0, 0, 0, 3},
                            value});
    const bytes want = cat({{0x04, static_cast<int>(body.size())}, body});
    bytes out(ready_frame_size(socket_type::router, as_span("id"), extra));
    ASSERT_EQ(write_ready_frame(out, socket_type::router, as_span("id"), extra), want.size());
    EXPECT_EQ(out, want);
}

// "If the body is 256 or more octets, the command SHOULD use a long size field"
TEST(Ready, LargeReadyUsesLongSize) {
    const bytes id = repeat('i', 255);
    const bytes v = repeat('v', 100);
    const property_view extra[] = {{"X-A", v}};
    bytes out(ready_frame_size(socket_type::dealer, id, extra));
    ASSERT_EQ(write_ready_frame(out, socket_type::dealer, id, extra), out.size());
    EXPECT_EQ(out[0], 0x06);
    const std::size_t body = out.size() - 9;
    EXPECT_EQ(out[8], body & 0xFF);
    EXPECT_EQ(out[7], body >> 8);
}

TEST(Ready, RefusesOversizeIdentityAndTooSmallBuffer) {
    const bytes id = repeat('i', 256);  // identity = 0*255OCTET
    bytes out(1000);
    EXPECT_EQ(write_ready_frame(out, socket_type::dealer, id), 0u);
    bytes tiny(10);
    EXPECT_EQ(write_ready_frame(tiny, socket_type::pair, {}), 0u);
}

TEST(Command, ParseSplitsNameAndData) {
    const bytes body(rfc_dealer_ready.begin() + 2, rfc_dealer_ready.end());
    command_view cmd;
    ASSERT_EQ(parse_command(body, cmd), wire_error::none);
    EXPECT_EQ(cmd.kind, command_kind::ready);
    EXPECT_EQ(cmd.name, "READY");
    EXPECT_EQ(cmd.data.size(), 41u - 6);
    std::span<const std::uint8_t> v;
    // "The case (upper or lower) of names SHALL NOT be significant."
    ASSERT_TRUE(find_property(cmd.data, "socket-type", v));
    EXPECT_EQ(std::string(v.begin(), v.end()), "DEALER");
    ASSERT_TRUE(find_property(cmd.data, "IDENTITY", v));
    EXPECT_TRUE(v.empty());
    EXPECT_FALSE(find_property(cmd.data, "Resource", v));
}

struct kind_case {
    const char *name;
    bytes body;
    command_kind kind;
};

class CommandKinds : public ::testing::TestWithParam<kind_case> {};

TEST_P(CommandKinds, Recognised) {
    command_view cmd;
    ASSERT_EQ(parse_command(GetParam().body, cmd), wire_error::none);
    EXPECT_EQ(cmd.kind, GetParam().kind);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CommandKinds,
    ::testing::Values(kind_case{"ready", cat({{5}, "READY"}), command_kind::ready},
                      kind_case{"error", cat({{5}, "ERROR", {0}}), command_kind::error},
                      kind_case{"subscribe", cat({{9}, "SUBSCRIBE", "t"}), command_kind::subscribe},
                      kind_case{"cancel", cat({{6}, "CANCEL"}), command_kind::cancel},
                      kind_case{"ping", cat({{4}, "PING", {0, 0}}), command_kind::ping},
                      kind_case{"pong", cat({{4}, "PONG"}), command_kind::pong},
                      // "Security mechanisms MAY use any command names they need to."
                      kind_case{"other", cat({{5}, "HELLO"}), command_kind::other},
                      kind_case{"lowercase_is_other", cat({{5}, "ready"}), command_kind::other}),
    [](const auto &info) { return std::string(info.param.name); });

struct bad_command_case {
    const char *name;
    bytes body;
};

class CommandRejects : public ::testing::TestWithParam<bad_command_case> {};

// "command-name = short-size 1*255command-name-char ; command-name-char = ALPHA"
TEST_P(CommandRejects, Malformed) {
    command_view cmd;
    EXPECT_EQ(parse_command(GetParam().body, cmd), wire_error::malformed_command);
}

INSTANTIATE_TEST_SUITE_P(Cases, CommandRejects,
                         ::testing::Values(bad_command_case{"empty", {}},
                                           bad_command_case{"zero_name", {0}},
                                           bad_command_case{"name_past_end", cat({{6}, "READY"})},
                                           bad_command_case{"digit_in_name", cat({{5}, "READ1"})},
                                           bad_command_case{"nul_in_name", cat({{2}, "A", {0}})}),
                         [](const auto &info) { return std::string(info.param.name); });

struct meta_case {
    const char *name;
    bytes data;
    bool ok;
};

class Metadata : public ::testing::TestWithParam<meta_case> {};

// "property = name value ; name = short-size 1*255name-char ;
//  value = 4OCTET *OCTET ; Size in network byte order"
TEST_P(Metadata, Validates) {
    EXPECT_EQ(validate_metadata(GetParam().data) == wire_error::none, GetParam().ok)
        << GetParam().name;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, Metadata,
    ::testing::Values(meta_case{"empty_list", {}, true},
                      meta_case{"one", cat({{1}, "A", {0, 0, 0, 1}, "v"}), true},
                      meta_case{"zero_value", cat({{1}, "A", {0, 0, 0, 0}}), true},
                      meta_case{"name_chars", cat({{7}, "a-Z_9.+", {0, 0, 0, 0}}), true},
                      // "Zero-sized names are not valid."
                      meta_case{"zero_name", cat({{0}, {0, 0, 0, 0}}), false},
                      meta_case{"bad_name_char", cat({{2}, "A:", {0, 0, 0, 0}}), false},
                      meta_case{"value_past_end", cat({{1}, "A", {0, 0, 0, 5}, "v"}), false},
                      meta_case{"truncated_size", cat({{1}, "A", {0, 0}}), false},
                      // "The value SHALL be 0 to 2,147,483,647 ... octets"
                      meta_case{"value_over_int32", cat({{1}, "A", {0x80, 0, 0, 0}}), false},
                      meta_case{"name_past_end", {5, 'A'}, false}),
    [](const auto &info) { return std::string(info.param.name); });

// "error = command-size %d5 "ERROR" error-reason ; error-reason = short-size 0*255VCHAR"
TEST(Error, ByteExactAndRoundTrip) {
    bytes out(max_error_frame_size);
    const std::size_t n = write_error_frame(out, "bad");
    out.resize(n);
    EXPECT_EQ(out, cat({{0x04, 0x0A, 0x05}, "ERROR", {3}, "bad"}));
    command_view cmd;
    ASSERT_EQ(parse_command(std::span(out).subspan(2), cmd), wire_error::none);
    std::string_view reason;
    ASSERT_EQ(parse_error_data(cmd.data, reason), wire_error::none);
    EXPECT_EQ(reason, "bad");
}

TEST(Error, LongReasonIsCutTo255) {
    const std::string r(300, 'r');
    bytes out(max_error_frame_size);
    const std::size_t n = write_error_frame(out, r);
    // 262-octet body: "If the body is 256 or more octets, the command SHOULD use a
    // long size field"
    EXPECT_EQ(n, 9 + 1 + 5 + 1 + 255u);
    EXPECT_EQ(out[0], 0x06);
    EXPECT_EQ(out[7], 1);
    EXPECT_EQ(out[8], 262 - 256);
    EXPECT_EQ(out[9 + 6], 255);
}

TEST(Error, MalformedReason) {
    std::string_view reason;
    EXPECT_EQ(parse_error_data({}, reason), wire_error::malformed_error_command);
    const bytes past_end = {5, 'a'};
    EXPECT_EQ(parse_error_data(past_end, reason), wire_error::malformed_error_command);
}

// "ping-ttl = 2OCTET ; ping-context = 0*16OCTET" and "[PONG] echoes the
// ping-context, which may be empty and MUST not exceed 16 octets"
TEST(Ping, ParseTtlAndContext) {
    std::uint16_t ttl = 0;
    std::span<const std::uint8_t> ctx;
    const bytes ok = cat({{0x01, 0x2C}, "ctx"});
    ASSERT_EQ(parse_ping_data(ok, ttl, ctx), wire_error::none);
    EXPECT_EQ(ttl, 300);
    EXPECT_EQ(std::string(ctx.begin(), ctx.end()), "ctx");
    const bytes no_ttl = {0x01};
    EXPECT_EQ(parse_ping_data(no_ttl, ttl, ctx), wire_error::malformed_ping);
    const bytes long_ctx = cat({{0, 0}, repeat(1, 17)});
    EXPECT_EQ(parse_ping_data(long_ctx, ttl, ctx), wire_error::malformed_ping);
    const bytes ctx16 = cat({{0, 0}, repeat(1, 16)});
    EXPECT_EQ(parse_ping_data(ctx16, ttl, ctx), wire_error::none);
    EXPECT_EQ(parse_pong_data(repeat(1, 16), ctx), wire_error::none);
    EXPECT_EQ(parse_pong_data(repeat(1, 17), ctx), wire_error::malformed_ping);
}

struct sub_case {
    const char *name;
    bytes body;
    subscription_action action;
    bytes topic;
};

class SubscriptionMessage : public ::testing::TestWithParam<sub_case> {};

// RFC 29/23 message form: "a subscription message ... the first octet is 1 for
// subscribe, 0 for unsubscribe" (libzmq's XPUB accepts this form from any peer).
TEST_P(SubscriptionMessage, Classified) {
    std::span<const std::uint8_t> topic;
    EXPECT_EQ(classify_subscription_message(GetParam().body, topic), GetParam().action);
    if (GetParam().action != subscription_action::none)
        EXPECT_EQ(bytes(topic.begin(), topic.end()), GetParam().topic);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SubscriptionMessage,
    ::testing::Values(
        sub_case{"subscribe", cat({{1}, "news"}), subscription_action::subscribe, cat({"news"})},
        sub_case{"subscribe_all", {1}, subscription_action::subscribe, {}},
        sub_case{"cancel", cat({{0}, "news"}), subscription_action::cancel, cat({"news"})},
        sub_case{"other_first_octet", cat({{2}, "x"}), subscription_action::none, {}},
        sub_case{"empty", {}, subscription_action::none, {}}),
    [](const auto &info) { return std::string(info.param.name); });

}  // namespace
}  // namespace zlink::wire
