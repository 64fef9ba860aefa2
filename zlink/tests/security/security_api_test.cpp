// The security options through the public API (zmq_setsockopt/zmq_getsockopt on a
// real socket: options_t hands them to security_options) and zmq_has("curve") for
// this build's flavour. The nocurve library itself is checked by the testbed
// (analysis/tests/test_toolchain_zlink_flavours.py).
#include "zmq.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

namespace {

#ifdef ZLINK_HAVE_CURVE
constexpr int curve_expected = 1;
#else
constexpr int curve_expected = 0;
#endif

class SecurityApi : public ::testing::Test {
protected:
    void SetUp() override
    {
        ctx = zmq_ctx_new();
        ASSERT_NE(ctx, nullptr);
        sock = zmq_socket(ctx, ZMQ_DEALER);
        ASSERT_NE(sock, nullptr);
    }
    void TearDown() override
    {
        zmq_close(sock);
        zmq_ctx_term(ctx);
    }
    int mechanism()
    {
        int v = -1;
        std::size_t len = sizeof v;
        EXPECT_EQ(zmq_getsockopt(sock, ZMQ_MECHANISM, &v, &len), 0);
        return v;
    }
    void* ctx = nullptr;
    void* sock = nullptr;
};

TEST_F(SecurityApi, HasCurveMatchesTheBuild)
{
    EXPECT_EQ(zmq_has("curve"), curve_expected);
    EXPECT_EQ(zmq_has("gssapi"), 0);
}

TEST_F(SecurityApi, PlainOptionsSwitchTheMechanism)
{
    EXPECT_EQ(mechanism(), ZMQ_NULL);
    ASSERT_EQ(zmq_setsockopt(sock, ZMQ_PLAIN_USERNAME, "admin", 5), 0);
    EXPECT_EQ(mechanism(), ZMQ_PLAIN);
    const int one = 1;
    ASSERT_EQ(zmq_setsockopt(sock, ZMQ_PLAIN_SERVER, &one, sizeof one), 0);
    int server = 0;
    std::size_t len = sizeof server;
    ASSERT_EQ(zmq_getsockopt(sock, ZMQ_PLAIN_SERVER, &server, &len), 0);
    EXPECT_EQ(server, 1);
}

TEST_F(SecurityApi, BadValuesAreEinval)
{
    char longname[300];
    std::memset(longname, 'a', sizeof longname);
    errno = 0;
    EXPECT_EQ(zmq_setsockopt(sock, ZMQ_PLAIN_PASSWORD, longname, 256), -1);
    EXPECT_EQ(errno, EINVAL);
    const int two = 2;
    errno = 0;
    EXPECT_EQ(zmq_setsockopt(sock, ZMQ_PLAIN_SERVER, &two, sizeof two), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(mechanism(), ZMQ_NULL);
}

TEST_F(SecurityApi, CurveKeyOptionsFollowTheFlavour)
{
    unsigned char key[32] = {7};
    errno = 0;
    const int rc = zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, key, sizeof key);
    if (!curve_expected) {
        EXPECT_EQ(rc, -1);
        EXPECT_EQ(errno, ENOTSUP);
        EXPECT_EQ(mechanism(), ZMQ_NULL);
        return;
    }
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(mechanism(), ZMQ_CURVE);
    errno = 0;
    EXPECT_EQ(zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, key, 31), -1);
    EXPECT_EQ(errno, EINVAL);
}

TEST_F(SecurityApi, ZapDomainRoundTrips)
{
    ASSERT_EQ(zmq_setsockopt(sock, ZMQ_ZAP_DOMAIN, "test", 4), 0);
    char buf[16] = {};
    std::size_t len = sizeof buf;
    ASSERT_EQ(zmq_getsockopt(sock, ZMQ_ZAP_DOMAIN, buf, &len), 0);
    EXPECT_STREQ(buf, "test");
    EXPECT_EQ(len, 5u);
}

} // namespace
