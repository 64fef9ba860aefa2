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
    void SetUp() override {
        ctx = zmq_ctx_new();
        ASSERT_NE(ctx, nullptr);
        sock = zmq_socket(ctx, ZMQ_DEALER);
        ASSERT_NE(sock, nullptr);
    }
    void TearDown() override {
        zmq_close(sock);
        zmq_ctx_term(ctx);
    }
    int mechanism() {
        int v = -1;
        std::size_t len = sizeof v;
        EXPECT_EQ(zmq_getsockopt(sock, ZMQ_MECHANISM, &v, &len), 0);
        return v;
    }
    void *ctx = nullptr;
    void *sock = nullptr;
};

TEST_F(SecurityApi, HasCurveMatchesTheBuild) {
    EXPECT_EQ(zmq_has("curve"), curve_expected);
    EXPECT_EQ(zmq_has("gssapi"), 0);
}

TEST_F(SecurityApi, PlainOptionsSwitchTheMechanism) {
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

TEST_F(SecurityApi, BadValuesAreEinval) {
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

TEST_F(SecurityApi, CurveKeyOptionsFollowTheFlavour) {
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

TEST_F(SecurityApi, ZapDomainRoundTrips) {
    ASSERT_EQ(zmq_setsockopt(sock, ZMQ_ZAP_DOMAIN, "test", 4), 0);
    char buf[16] = {};
    std::size_t len = sizeof buf;
    ASSERT_EQ(zmq_getsockopt(sock, ZMQ_ZAP_DOMAIN, buf, &len), 0);
    EXPECT_STREQ(buf, "test");
    EXPECT_EQ(len, 5u);
}

// Key pairs published in libzmq's zmq_curve(7) manual (also in its test_sodium).
struct published_pair {
    const char *public_key;
    const char *secret_key;
};
constexpr published_pair client_pair{"Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID",
                                     "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs"};
constexpr published_pair server_pair{"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7",
                                     "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"};

#ifndef ZLINK_HAVE_CURVE

TEST(CurveKeys, HelpersAreNotSupportedWithoutLibsodium) {
    char pub[41], sec[41];
    errno = 0;
    EXPECT_EQ(zmq_curve_public(pub, client_pair.secret_key), -1);
    EXPECT_EQ(errno, ENOTSUP);
    errno = 0;
    EXPECT_EQ(zmq_curve_keypair(pub, sec), -1);
    EXPECT_EQ(errno, ENOTSUP);
}

#else

TEST(CurveKeys, PublicKeyOfPublishedSecretKeys) {
    char pub[41] = {};
    for (const auto &pair : {client_pair, server_pair}) {
        ASSERT_EQ(zmq_curve_public(pub, pair.secret_key), 0);
        EXPECT_STREQ(pub, pair.public_key);
    }
}

TEST(CurveKeys, KeypairIsZ85AndConsistent) {
    char pub[41], sec[41], derived[41];
    ASSERT_EQ(zmq_curve_keypair(pub, sec), 0);
    EXPECT_EQ(std::strlen(pub), 40u);
    EXPECT_EQ(std::strlen(sec), 40u);
    ASSERT_EQ(zmq_curve_public(derived, sec), 0);
    EXPECT_STREQ(derived, pub);
    char pub2[41], sec2[41];
    ASSERT_EQ(zmq_curve_keypair(pub2, sec2), 0);
    EXPECT_STRNE(sec, sec2) << "fresh randomness each call";
}

TEST(CurveKeys, BadSecretKeyIsEinval) {
    char pub[41];
    for (const char *bad : {"", "short", "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%c",  // 39
                            "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs12345",         // 45
                            "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%c\\"}) {          // not Z85
        errno = 0;
        EXPECT_EQ(zmq_curve_public(pub, bad), -1) << bad;
        EXPECT_EQ(errno, EINVAL);
    }
    errno = 0;
    EXPECT_EQ(zmq_curve_keypair(nullptr, pub), -1);
    EXPECT_EQ(errno, EINVAL);
}

TEST_F(SecurityApi, CurveKeysInZ85FormsAsLibzmq) {
    // 40 characters, or 40 plus NUL (41): both decode to the same binary key.
    ASSERT_EQ(zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, server_pair.public_key, 40), 0);
    unsigned char bin40[32];
    std::size_t len = 32;
    ASSERT_EQ(zmq_getsockopt(sock, ZMQ_CURVE_SERVERKEY, bin40, &len), 0);
    ASSERT_EQ(zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, server_pair.public_key, 41), 0);
    unsigned char bin41[32];
    ASSERT_EQ(zmq_getsockopt(sock, ZMQ_CURVE_SERVERKEY, bin41, &len), 0);
    EXPECT_EQ(std::memcmp(bin40, bin41, 32), 0);
    uint8_t want[32];
    ASSERT_NE(zmq_z85_decode(want, server_pair.public_key), nullptr);
    EXPECT_EQ(std::memcmp(bin40, want, 32), 0);
    // Asked for 41 octets, the getter gives Z85 text and a NUL.
    char text[41];
    len = sizeof text;
    ASSERT_EQ(zmq_getsockopt(sock, ZMQ_CURVE_SERVERKEY, text, &len), 0);
    EXPECT_STREQ(text, server_pair.public_key);
    len = 40;
    errno = 0;
    EXPECT_EQ(zmq_getsockopt(sock, ZMQ_CURVE_SERVERKEY, text, &len), -1) << "40: neither form";
    EXPECT_EQ(errno, EINVAL);
}

TEST_F(SecurityApi, BadZ85KeyIsEinvalAndKeepsTheOldKey) {
    ASSERT_EQ(zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, client_pair.secret_key, 40), 0);
    const char not_z85[] = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%c\\";
    const char no_nul[] = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%csX";
    for (const auto &[text, len] :
         {std::pair{not_z85, std::size_t{40}}, std::pair{no_nul, std::size_t{41}}}) {
        errno = 0;
        EXPECT_EQ(zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, text, len), -1);
        EXPECT_EQ(errno, EINVAL);
    }
    char back[41];
    std::size_t len = sizeof back;
    ASSERT_EQ(zmq_getsockopt(sock, ZMQ_CURVE_SECRETKEY, back, &len), 0);
    EXPECT_STREQ(back, client_pair.secret_key);
}

#endif

}  // namespace
