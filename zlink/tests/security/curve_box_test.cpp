// curve_box against published vectors: X25519 (RFC 7748 section 6.1, the same keys
// as NaCl's tests) and NaCl's crypto_box example ("Cryptography in NaCl", section
// 10; libsodium test/default/box). The box vector checks the claim curve_box.hpp
// makes: libsodium's easy layout (MAC, then ciphertext) is NaCl's box without its
// 16 zero octets, which is what RFC 26 puts on the wire.
#include "wire/curve_box.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace zlink::wire {
namespace {

std::vector<std::uint8_t> unhex(std::string_view h) {
    std::vector<std::uint8_t> out;
    for (std::size_t i = 0; i + 1 < h.size(); i += 2)
        out.push_back(
            static_cast<std::uint8_t>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16)));
    return out;
}

curve_key key(std::string_view h) {
    curve_key k{};
    const auto v = unhex(h);
    std::copy(v.begin(), v.end(), k.begin());
    return k;
}

const curve_key alice_secret =
    key("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
const curve_key alice_public =
    key("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
const curve_key bob_secret =
    key("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");
const curve_key bob_public =
    key("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f");

const auto box_nonce_bytes = unhex("69696ee955b62b73cd62bda875fc73d68219e0036b7a0b37");
const auto box_plain = unhex(
    "be075fc53c81f2d5cf141316ebeb0c7b5228c52a4c62cbd44b66849b64244ffce5ecbaaf33bd751a1ac728d45e6c"
    "61296cdc3c01233561f41db66cce314adb310e3be8250c46f06dceea3a7fa1348057e2f6556ad6b1318a024a838f"
    "21af1fde048977eb48f59ffd4924ca1c60902e52f0a089bc76897040e082f937763848645e0705");
const auto box_cipher = unhex(
    "f3ffc7703f9400e52a7dfb4b3d3305d98e993b9f48681273c29650ba32fc76ce48332ea7164d96a4476fb8c531a1"
    "186ac0dfc17c98dce87b4da7f011ec48c97271d2c20f9b928fe2270d6fb863d51738b48eeee314a7cc8ab9321645"
    "48e526ae90224368517acfeabd6bb3732bc0e9da99832b61ca01b6de56244a9e88d5f9b37973f622a43d14a6599b"
    "1f654cb45a74e355a5");

curve_box::nonce box_nonce() {
    curve_box::nonce n{};
    std::copy(box_nonce_bytes.begin(), box_nonce_bytes.end(), n.begin());
    return n;
}

class CurveBox : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_TRUE(curve_box::ready()); }
};

TEST_F(CurveBox, PublicKeysFromSecretKeys) {
    curve_key pub{};
    ASSERT_TRUE(curve_box::public_of(alice_secret, pub));
    EXPECT_EQ(pub, alice_public);
    ASSERT_TRUE(curve_box::public_of(bob_secret, pub));
    EXPECT_EQ(pub, bob_public);
}

TEST_F(CurveBox, SealMatchesNaclVector) {
    std::vector<std::uint8_t> out(box_plain.size() + curve_box::mac_size);
    ASSERT_TRUE(curve_box::seal(out, box_plain, box_nonce(), bob_public, alice_secret));
    EXPECT_EQ(out, box_cipher);
}

TEST_F(CurveBox, SharedKeyGivesTheSameBox) {
    curve_key shared{};
    ASSERT_TRUE(curve_box::precompute(shared, bob_public, alice_secret));
    std::vector<std::uint8_t> out(box_plain.size() + curve_box::mac_size);
    ASSERT_TRUE(curve_box::seal_shared(out, box_plain, box_nonce(), shared));
    EXPECT_EQ(out, box_cipher);
    // In place: MAC apart, text where it lies; same octets as the easy layout.
    auto text = box_plain;
    std::array<std::uint8_t, curve_box::mac_size> mac{};
    ASSERT_TRUE(curve_box::seal_shared_in_place(text, mac, box_nonce(), shared));
    EXPECT_TRUE(std::equal(mac.begin(), mac.end(), box_cipher.begin()));
    EXPECT_TRUE(std::equal(text.begin(), text.end(), box_cipher.begin() + curve_box::mac_size));
}

TEST_F(CurveBox, BobOpensAlicesBox) {
    std::vector<std::uint8_t> out(box_plain.size());
    ASSERT_TRUE(curve_box::open(out, box_cipher, box_nonce(), alice_public, bob_secret));
    EXPECT_EQ(out, box_plain);
}

TEST_F(CurveBox, TamperedBoxDoesNotOpen) {
    for (std::size_t at :
         {std::size_t{0}, std::size_t{15}, std::size_t{16}, box_cipher.size() - 1}) {
        auto bad = box_cipher;
        bad[at] ^= 0x01;
        std::vector<std::uint8_t> out(box_plain.size());
        EXPECT_FALSE(curve_box::open(out, bad, box_nonce(), alice_public, bob_secret))
            << "octet " << at;
    }
    auto nonce = box_nonce();
    nonce[23] ^= 1;
    std::vector<std::uint8_t> out(box_plain.size());
    EXPECT_FALSE(curve_box::open(out, box_cipher, nonce, alice_public, bob_secret))
        << "other nonce";
}

TEST_F(CurveBox, WrongSizesAreRefused) {
    std::vector<std::uint8_t> small(box_plain.size());
    EXPECT_FALSE(curve_box::seal(small, box_plain, box_nonce(), bob_public, alice_secret));
    std::vector<std::uint8_t> out(4);
    EXPECT_FALSE(curve_box::open(out, std::span(box_cipher).first(10), box_nonce(), alice_public,
                                 bob_secret));
}

TEST_F(CurveBox, NoncesAreLaidOutAsTheRfcSays) {
    const auto s = curve_box::short_nonce("CurveZMQMESSAGEC", 0x0102030405060708ull);
    EXPECT_EQ(std::string(s.begin(), s.begin() + 16), "CurveZMQMESSAGEC");
    EXPECT_EQ(std::vector<std::uint8_t>(s.begin() + 16, s.end()),
              (std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}));
    const std::array<std::uint8_t, 16> tail{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 7};
    const auto l = curve_box::long_nonce("COOKIE--", tail);
    EXPECT_EQ(std::string(l.begin(), l.begin() + 8), "COOKIE--");
    EXPECT_EQ(l[23], 7);
}

}  // namespace
}  // namespace zlink::wire
