// Z85 (RFC 32): the RFC's own test vector, round trips, and every kind of bad
// input, through zmq_z85_encode/decode and the wire::z85 codec underneath.
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "wire/z85.hpp"
#include "zmq.h"

namespace {

// RFC 32, "Test Case": these 8 octets encode as "HelloWorld".
const uint8_t rfc_bytes[8] = {0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B};

TEST(Z85, EncodesTheRfcVector) {
    char text[11];
    ASSERT_EQ(zmq_z85_encode(text, rfc_bytes, sizeof rfc_bytes), text);
    EXPECT_STREQ(text, "HelloWorld");
}

TEST(Z85, DecodesTheRfcVector) {
    uint8_t bytes[8] = {};
    ASSERT_EQ(zmq_z85_decode(bytes, "HelloWorld"), bytes);
    EXPECT_EQ(std::memcmp(bytes, rfc_bytes, sizeof bytes), 0);
}

TEST(Z85, ExtremesOfOneGroup) {
    const uint8_t zeros[4] = {0, 0, 0, 0}, ones[4] = {0xff, 0xff, 0xff, 0xff};
    char text[6];
    zmq_z85_encode(text, zeros, 4);
    EXPECT_STREQ(text, "00000");
    zmq_z85_encode(text, ones, 4);
    EXPECT_STREQ(text, "%nSc0");  // 2^32 - 1 in base 85 with RFC 32's digits
    uint8_t back[4];
    ASSERT_NE(zmq_z85_decode(back, "%nSc0"), nullptr);
    EXPECT_EQ(std::memcmp(back, ones, 4), 0);
}

TEST(Z85, RandomRoundTrips) {
    std::mt19937 rng(32);  // fixed seed: the same bytes on every run
    for (size_t size = 0; size <= 256; size += 4) {
        std::vector<uint8_t> in(size), out(size + 1);
        for (auto &b : in)
            b = static_cast<uint8_t>(rng());
        std::string text(size * 5 / 4 + 1, '?');
        ASSERT_NE(zmq_z85_encode(text.data(), in.data(), size), nullptr) << size;
        EXPECT_EQ(std::strlen(text.c_str()), size * 5 / 4);
        if (size == 0)
            continue;  // libzmq refuses to decode the empty string
        ASSERT_NE(zmq_z85_decode(out.data(), text.c_str()), nullptr) << size;
        EXPECT_EQ(std::memcmp(in.data(), out.data(), size), 0) << size;
    }
}

TEST(Z85, RefusesWhatIsNotZ85) {
    uint8_t bytes[16];
    char text[32];
    const uint8_t three[3] = {1, 2, 3};
    const struct {
        const char *what;
        const char *text;
    } bad[] = {
        {"empty", ""},
        {"length not a multiple of 5", "Hello"
                                       "Wor"},
        {"space", "Hello World"},
        {"quote", "Hel\"o"},
        {"backslash", "Hel\\o"},
        {"non-ascii", "Hell\xc3"},
        {"group above 2^32-1", "%nSc1"},
        {"largest group", "#####"},
    };
    for (const auto &b : bad) {
        errno = 0;
        EXPECT_EQ(zmq_z85_decode(bytes, b.text), nullptr) << b.what;
        EXPECT_EQ(errno, EINVAL) << b.what;
    }
    errno = 0;
    EXPECT_EQ(zmq_z85_encode(text, three, 3), nullptr);
    EXPECT_EQ(errno, EINVAL);
}

TEST(Z85, CodecReportsSizes) {
    static_assert(zlink::wire::z85_encoded_size(32) == 40);
    static_assert(zlink::wire::z85_decoded_size(40) == 32);
    uint8_t out[4];
    EXPECT_FALSE(zlink::wire::z85_decode(out, "0000", 4));
    EXPECT_TRUE(zlink::wire::z85_decode(out, "00000", 5));
}

}  // namespace
