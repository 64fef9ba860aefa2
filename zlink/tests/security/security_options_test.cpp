// Security socket options as libzmq 4.3.5 defines them (src/options.cpp): which
// option switches the mechanism, lengths accepted and returned, and what a build
// without libsodium says. Compiled twice: with CURVE (ZLINK_HAVE_CURVE) and
// without (the same source with the macro removed), so both flavours are checked
// in one ctest run.
#include "core/security_options.hpp"

#include "zmq.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace zlink {
namespace {

using wire::mechanism_kind;

#ifdef ZLINK_HAVE_CURVE
constexpr bool curve_expected = true;
#else
constexpr bool curve_expected = false;
#endif

int get_int(const security_options &o, int option) {
    int v = -7;
    std::size_t len = sizeof v;
    EXPECT_EQ(o.get(option, &v, &len), 0) << option;
    return v;
}

int set_int(security_options &o, int option, int v) { return o.set(option, &v, sizeof v); }

int set_str(security_options &o, int option, const std::string &s) {
    return o.set(option, s.data(), s.size());
}

TEST(SecurityOptions, DefaultIsNull) {
    security_options o;
    EXPECT_EQ(get_int(o, ZMQ_MECHANISM), ZMQ_NULL);
    EXPECT_EQ(get_int(o, ZMQ_PLAIN_SERVER), 0);
    EXPECT_EQ(get_int(o, zap_enforce_domain_option), 0);
}

TEST(SecurityOptions, UsernameMakesAPlainClient) {
    security_options o;
    ASSERT_EQ(set_str(o, ZMQ_PLAIN_USERNAME, "admin"), 0);
    ASSERT_EQ(set_str(o, ZMQ_PLAIN_PASSWORD, "password"), 0);
    EXPECT_EQ(get_int(o, ZMQ_MECHANISM), ZMQ_PLAIN);
    EXPECT_EQ(get_int(o, ZMQ_PLAIN_SERVER), 0);
    char buf[64];
    std::memset(buf, 'x', sizeof buf);
    std::size_t len = sizeof buf;
    ASSERT_EQ(o.get(ZMQ_PLAIN_USERNAME, buf, &len), 0);
    EXPECT_EQ(len, 6u) << "string plus NUL, as libzmq";
    EXPECT_STREQ(buf, "admin");
    EXPECT_EQ(buf[63], 0) << "libzmq zeroes the rest of the buffer";
    len = 5;
    errno = 0;
    EXPECT_EQ(o.get(ZMQ_PLAIN_USERNAME, buf, &len), -1) << "no room for the NUL";
    EXPECT_EQ(errno, EINVAL);
}

TEST(SecurityOptions, PlainServerAndBackToNull) {
    security_options o;
    ASSERT_EQ(set_int(o, ZMQ_PLAIN_SERVER, 1), 0);
    EXPECT_EQ(get_int(o, ZMQ_MECHANISM), ZMQ_PLAIN);
    EXPECT_EQ(get_int(o, ZMQ_PLAIN_SERVER), 1);
    EXPECT_TRUE(o.config.as_server);
    ASSERT_EQ(set_int(o, ZMQ_PLAIN_SERVER, 0), 0);
    EXPECT_EQ(get_int(o, ZMQ_MECHANISM), ZMQ_NULL);
    ASSERT_EQ(set_str(o, ZMQ_PLAIN_USERNAME, "u"), 0);
    ASSERT_EQ(o.set(ZMQ_PLAIN_USERNAME, nullptr, 0), 0) << "NULL/0 switches back to NULL";
    EXPECT_EQ(get_int(o, ZMQ_MECHANISM), ZMQ_NULL);
}

struct bad_set {
    const char *name;
    int option;
    std::string value;
};

class SecurityOptionsRefuse : public ::testing::TestWithParam<bad_set> {};

TEST_P(SecurityOptionsRefuse, WithEinvalAndNoChange) {
    security_options o;
    errno = 0;
    EXPECT_EQ(set_str(o, GetParam().option, GetParam().value), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(get_int(o, ZMQ_MECHANISM), ZMQ_NULL) << "a refused value changes nothing";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SecurityOptionsRefuse,
    ::testing::Values(bad_set{"username_256", ZMQ_PLAIN_USERNAME, std::string(256, 'u')},
                      bad_set{"password_256", ZMQ_PLAIN_PASSWORD, std::string(256, 'p')},
                      bad_set{"plain_server_2", ZMQ_PLAIN_SERVER, std::string("\x02\0\0\0", 4)},
                      bad_set{"plain_server_short", ZMQ_PLAIN_SERVER, std::string("\x01", 1)},
                      bad_set{"zap_domain_256", ZMQ_ZAP_DOMAIN, std::string(256, 'd')},
                      bad_set{"zap_domain_empty", ZMQ_ZAP_DOMAIN, std::string()},
                      bad_set{"mechanism_read_only", ZMQ_MECHANISM, std::string("\x01\0\0\0", 4)}),
    [](const auto &info) { return std::string(info.param.name); });

TEST(SecurityOptions, ZapDomainAndEnforcement) {
    security_options o;
    ASSERT_EQ(set_str(o, ZMQ_ZAP_DOMAIN, "global"), 0);
    ASSERT_EQ(set_int(o, zap_enforce_domain_option, 5), 0) << "libzmq: any non-zero int is true";
    EXPECT_EQ(get_int(o, zap_enforce_domain_option), 1);
    char buf[16];
    std::size_t len = sizeof buf;
    ASSERT_EQ(o.get(ZMQ_ZAP_DOMAIN, buf, &len), 0);
    EXPECT_STREQ(buf, "global");
    const auto c = o.handshake_config();
    EXPECT_TRUE(c.zap.domain_set);
    EXPECT_TRUE(c.zap.enforce_domain);
}

TEST(SecurityOptions, IntGetsNeedExactlyAnInt) {
    security_options o;
    long long v = 0;
    std::size_t len = sizeof v;
    errno = 0;
    EXPECT_EQ(o.get(ZMQ_MECHANISM, &v, &len), -1);
    EXPECT_EQ(errno, EINVAL);
}

const unsigned char key32[32] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                                 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};

TEST(SecurityOptions, CurveOptionsFollowTheBuild) {
    security_options o;
    errno = 0;
    const int rc = o.set(ZMQ_CURVE_SERVERKEY, key32, sizeof key32);
    if (!curve_expected) {
        EXPECT_EQ(rc, -1);
        EXPECT_EQ(errno, ENOTSUP) << "never a silent NULL connection";
        EXPECT_EQ(set_int(o, ZMQ_CURVE_SERVER, 1), -1);
        EXPECT_EQ(errno, ENOTSUP);
        unsigned char out[32];
        std::size_t len = sizeof out;
        EXPECT_EQ(o.get(ZMQ_CURVE_PUBLICKEY, out, &len), -1);
        EXPECT_EQ(errno, ENOTSUP);
        EXPECT_EQ(get_int(o, ZMQ_MECHANISM), ZMQ_NULL);
        return;
    }
    ASSERT_EQ(rc, 0);
    EXPECT_EQ(get_int(o, ZMQ_MECHANISM), ZMQ_CURVE);
    EXPECT_EQ(get_int(o, ZMQ_CURVE_SERVER), 0);
    unsigned char out[32] = {};
    std::size_t len = sizeof out;
    ASSERT_EQ(o.get(ZMQ_CURVE_SERVERKEY, out, &len), 0);
    EXPECT_EQ(std::memcmp(out, key32, 32), 0);
    ASSERT_EQ(set_int(o, ZMQ_CURVE_SERVER, 1), 0);
    EXPECT_EQ(get_int(o, ZMQ_CURVE_SERVER), 1);
    EXPECT_TRUE(o.config.as_server);
}

#ifdef ZLINK_HAVE_CURVE  // without CURVE every key is ENOTSUP (checked above)
TEST(SecurityOptions, CurveKeysOfTheWrongLengthAreRefused) {
    security_options o;
    unsigned char long_key[64] = {};
    for (std::size_t len : {1u, 31u, 33u, 39u, 42u, 64u}) {
        errno = 0;
        EXPECT_EQ(o.set(ZMQ_CURVE_SECRETKEY, long_key, len), -1) << len;
        EXPECT_EQ(errno, EINVAL);
    }
    EXPECT_EQ(get_int(o, ZMQ_MECHANISM), ZMQ_NULL) << "refused keys change nothing";
    errno = 0;
    EXPECT_EQ(o.set(ZMQ_CURVE_SECRETKEY, nullptr, 32), -1);
    EXPECT_EQ(errno, EINVAL);
    unsigned char out[40];
    for (std::size_t len : {16u, 31u, 33u, 40u}) {
        std::size_t l = len;
        errno = 0;
        EXPECT_EQ(o.get(ZMQ_CURVE_SECRETKEY, out, &l), -1) << len;
        EXPECT_EQ(errno, EINVAL);
    }
}
#endif

}  // namespace
}  // namespace zlink
