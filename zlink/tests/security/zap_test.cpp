// ZAP frames (RFC 27) as libzmq 4.3.5 exchanges them with the handler, and every
// way a handler's reply can be wrong (the cases libzmq's test_security_zap uses:
// wrong version, wrong request id, invalid status, too many parts, ...).
#include "wire/zap.hpp"

#include "wire/mechanism.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace zlink::wire {
namespace {

std::string text(const zap_frame &f) { return {f.begin(), f.end()}; }

TEST(ZapRequest, FramesInRfcOrderAfterTheDelimiter) {
    zap_request r;
    r.mechanism = "PLAIN";
    r.credentials = {{'a', 'd', 'm', 'i', 'n'}, {'p', 'w'}};
    const std::uint8_t id[] = {'I', 'D', 'E', 'N', 'T'};
    const auto f = zap_request_frames(r, "global", "127.0.0.1", id);
    ASSERT_EQ(f.size(), 9u);
    EXPECT_TRUE(f[0].empty()) << "delimiter";
    EXPECT_EQ(text(f[1]), "1.0");
    EXPECT_EQ(text(f[2]), "1");
    EXPECT_EQ(text(f[3]), "global");
    EXPECT_EQ(text(f[4]), "127.0.0.1");
    EXPECT_EQ(text(f[5]), "IDENT");
    EXPECT_EQ(text(f[6]), "PLAIN");
    EXPECT_EQ(text(f[7]), "admin");
    EXPECT_EQ(text(f[8]), "pw");
}

TEST(ZapRequest, NullHasNoCredentialFrames) {
    zap_request r;
    r.mechanism = "NULL";
    EXPECT_EQ(zap_request_frames(r, "", "", {}).size(), 7u);
}

struct reply_case {
    const char *name;
    std::vector<std::string> frames;
    std::vector<bool> more;  // empty: MORE on all but the last
    wire_error error;
};

std::vector<zap_frame_view> views(const reply_case &c, std::vector<zap_frame> &storage) {
    storage.clear();
    for (const auto &s : c.frames)
        storage.emplace_back(s.begin(), s.end());
    std::vector<zap_frame_view> v;
    for (std::size_t i = 0; i < storage.size(); ++i)
        v.push_back({storage[i], c.more.empty() ? i + 1 < storage.size() : bool(c.more[i])});
    return v;
}

class ZapReply : public ::testing::TestWithParam<reply_case> {};

TEST_P(ZapReply, IsCheckedAsLibzmqChecksIt) {
    std::vector<zap_frame> storage;
    zap_reply out;
    out.status_code = "untouched";
    EXPECT_EQ(parse_zap_reply(views(GetParam(), storage), out), GetParam().error)
        << to_string(GetParam().error);
    if (GetParam().error == wire_error::none) {
        EXPECT_EQ(out.status_code, GetParam().frames[3]);
        EXPECT_EQ(out.user_id, GetParam().frames[5]);
        EXPECT_FALSE(out.handler_missing);
    } else {
        EXPECT_EQ(out.status_code, "untouched") << "nothing filled in from a bad reply";
    }
}

const std::string meta = std::string("\x04"
                                     "Name"
                                     "\0\0\0\x05"
                                     "value",
                                     14);

INSTANTIATE_TEST_SUITE_P(
    Cases, ZapReply,
    ::testing::Values(
        reply_case{"ok", {"", "1.0", "1", "200", "OK", "anonymous", ""}, {}, wire_error::none},
        reply_case{"ok_metadata", {"", "1.0", "1", "200", "OK", "u", meta}, {}, wire_error::none},
        reply_case{"refused", {"", "1.0", "1", "400", "No", "", ""}, {}, wire_error::none},
        reply_case{"too_many_parts",
                   {"", "1.0", "1", "200", "OK", "u", "", ""},
                   {},
                   wire_error::zap_malformed_reply},
        reply_case{"too_few_parts",
                   {"", "1.0", "1", "200", "OK", "u"},
                   {},
                   wire_error::zap_malformed_reply},
        reply_case{"last_has_more",
                   {"", "1.0", "1", "200", "OK", "u", ""},
                   {1, 1, 1, 1, 1, 1, 1},
                   wire_error::zap_malformed_reply},
        reply_case{"middle_lacks_more",
                   {"", "1.0", "1", "200", "OK", "u", ""},
                   {1, 1, 0, 1, 1, 1, 0},
                   wire_error::zap_malformed_reply},
        reply_case{"delimiter_not_empty",
                   {"x", "1.0", "1", "200", "OK", "u", ""},
                   {},
                   wire_error::zap_unspecified},
        reply_case{"wrong_version",
                   {"", "invalid_version", "1", "200", "OK", "u", ""},
                   {},
                   wire_error::zap_bad_version},
        reply_case{"wrong_request_id",
                   {"", "1.0", "invalid_request_id", "200", "OK", "u", ""},
                   {},
                   wire_error::zap_bad_request_id},
        reply_case{"invalid_status",
                   {"", "1.0", "1", "invalid_status", "OK", "u", ""},
                   {},
                   wire_error::zap_invalid_status_code},
        reply_case{"status_201",
                   {"", "1.0", "1", "201", "OK", "u", ""},
                   {},
                   wire_error::zap_invalid_status_code},
        reply_case{"bad_metadata",
                   {"", "1.0", "1", "200", "OK", "u", "\x09short"},
                   {},
                   wire_error::zap_invalid_metadata}),
    [](const auto &info) { return std::string(info.param.name); });

TEST(ZapReply, FailuresReportLibzmqsZapValues) {
    EXPECT_EQ(classify_failure(wire_error::zap_bad_version, "").value, 0x20000003u);
    EXPECT_EQ(classify_failure(wire_error::zap_malformed_reply, "").value, 0x20000001u);
}

}  // namespace
}  // namespace zlink::wire
