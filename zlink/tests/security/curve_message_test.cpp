// CURVE MESSAGE codec (RFC 26 "MESSAGE", libzmq 4.3.5 flags) with a fixed shared
// key: layout checked by decrypting with libsodium directly, then every way a
// received MESSAGE can be wrong.
#include "wire/curve_message.hpp"

#include "wire/frame.hpp"

#include <gtest/gtest.h>
#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace zlink::wire {
namespace {

using bytes = std::vector<std::uint8_t>;

curve_key fixed_key() {
    curve_key k{};
    for (std::size_t i = 0; i < k.size(); ++i)
        k[i] = static_cast<std::uint8_t>(i * 7 + 1);
    return k;
}

bytes payload(std::size_t n) {
    bytes b(n);
    for (std::size_t i = 0; i < n; ++i)
        b[i] = static_cast<std::uint8_t>(i * 31 + 5);
    return b;
}

// Strips the frame header the encoder wrote: a plain frame, as libzmq sends
// MESSAGE (with the COMMAND flag libzmq 4.3.5 would drop the message).
bytes frame_body(const bytes &frame) {
    EXPECT_FALSE(frame[0] & frame_flag::command);
    EXPECT_FALSE(frame[0] & frame_flag::more) << "MORE travels encrypted, never in the header";
    const std::size_t h = (frame[0] & frame_flag::long_size) ? long_header_size : short_header_size;
    return bytes(frame.begin() + static_cast<std::ptrdiff_t>(h), frame.end());
}

class CurveMessage : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_TRUE(curve_box::ready()); }
    curve_message_codec client{fixed_key(), false, 3, 1};  // HELLO=1, INITIATE=2 sent; READY=1 seen
    curve_message_codec server{fixed_key(), true, 2, 2};

    bytes seal_body(curve_message_codec &c, std::uint8_t flags, const bytes &body) {
        bytes out;
        EXPECT_EQ(c.seal(flags, body, out), wire_error::none);
        return frame_body(out);
    }
};

TEST_F(CurveMessage, LayoutAsLibzmqSendsIt) {
    const bytes body = payload(10);
    const bytes m = seal_body(client, frame_flag::more, body);
    ASSERT_EQ(m.size(), curve_message_overhead + body.size());
    EXPECT_EQ(std::string(m.begin(), m.begin() + 8), "\x07MESSAGE");
    EXPECT_EQ(curve_box::load_u64(m.data() + 8), 3u)
        << "client's first MESSAGE nonce follows INITIATE's 2";
    // Decrypt independently: nonce "CurveZMQMESSAGEC" + short nonce, box = MAC + text.
    const auto n = curve_box::short_nonce("CurveZMQMESSAGEC", 3);
    bytes plain(m.size() - 16 - curve_box::mac_size);
    const auto key = fixed_key();
    ASSERT_EQ(crypto_box_open_easy_afternm(plain.data(), m.data() + 16, m.size() - 16, n.data(),
                                           key.data()),
              0);
    EXPECT_EQ(plain[0], 0x01) << "MORE is bit 0 of the encrypted flags";
    EXPECT_EQ(bytes(plain.begin() + 1, plain.end()), body);
}

TEST_F(CurveMessage, CommandBitIsLibzmqsBitOne) {
    const bytes m = seal_body(server, frame_flag::command, {4, 'P', 'I', 'N', 'G', 0, 10});
    const auto n = curve_box::short_nonce("CurveZMQMESSAGES", curve_box::load_u64(m.data() + 8));
    bytes plain(m.size() - 32);
    const auto key = fixed_key();
    ASSERT_EQ(crypto_box_open_easy_afternm(plain.data(), m.data() + 16, m.size() - 16, n.data(),
                                           key.data()),
              0);
    EXPECT_EQ(plain[0], 0x02);
}

TEST_F(CurveMessage, RoundTripsEverySizeAndFlag) {
    for (std::size_t size : {0u, 1u, 200u, 255u, 256u, 65536u, 262144u}) {
        for (std::uint8_t flags : {std::uint8_t{0}, frame_flag::more, frame_flag::command}) {
            const bytes body = payload(size);
            std::uint8_t got_flags = 0xFF;
            bytes got;
            ASSERT_EQ(server.open(seal_body(client, flags, body), got_flags, got), wire_error::none)
                << size;
            EXPECT_EQ(got_flags, flags);
            EXPECT_EQ(got, body);
            ASSERT_EQ(client.open(seal_body(server, flags, body), got_flags, got),
                      wire_error::none);
            EXPECT_EQ(got, body);
        }
    }
}

// The engine opens a received frame where it lies and hands the plaintext on as a
// window into it; the plaintext must therefore be exactly the frame's tail.
TEST_F(CurveMessage, OpensInPlaceTheBodyIsTheFramesTail) {
    const bytes body = payload(262144);
    bytes m = seal_body(client, frame_flag::more, body);
    std::uint8_t flags = 0;
    std::span<std::uint8_t> got;
    ASSERT_EQ(server.open_in_place(m, flags, got), wire_error::none);
    EXPECT_EQ(got.data(), m.data() + curve_message_overhead);
    EXPECT_EQ(got.size(), body.size());
    EXPECT_EQ(flags, frame_flag::more);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), body.begin(), body.end()));
}

// A forged frame opened in place must leave no plaintext behind: the box is
// checked before anything is decrypted, so the frame keeps its ciphertext.
TEST_F(CurveMessage, RefusedInPlaceLeavesTheCiphertext) {
    bytes m = seal_body(client, 0, payload(4096));
    m[curve_message_overhead + 100] ^= 0x01;
    const bytes before = m;
    std::uint8_t flags = 0;
    std::span<std::uint8_t> got;
    EXPECT_EQ(server.open_in_place(m, flags, got), wire_error::cryptographic);
    EXPECT_TRUE(got.empty());
    EXPECT_EQ(m, before);
}

TEST_F(CurveMessage, LongFramesGetLongHeaders) {
    bytes out;
    ASSERT_EQ(client.seal(0, payload(300), out), wire_error::none);
    EXPECT_EQ(out[0], frame_flag::long_size);
    EXPECT_EQ(out.size(), long_header_size + curve_message_overhead + 300);
}

TEST_F(CurveMessage, ReplayedMessageIsRefused) {
    const bytes m = seal_body(client, 0, payload(5));
    std::uint8_t flags = 0;
    bytes got;
    ASSERT_EQ(server.open(m, flags, got), wire_error::none);
    EXPECT_EQ(server.open(m, flags, got), wire_error::invalid_sequence);
}

TEST_F(CurveMessage, ReorderedMessagesAreRefused) {
    const bytes first = seal_body(client, 0, payload(5));
    const bytes second = seal_body(client, 0, payload(6));
    std::uint8_t flags = 0;
    bytes got;
    ASSERT_EQ(server.open(second, flags, got), wire_error::none);
    EXPECT_EQ(server.open(first, flags, got), wire_error::invalid_sequence);
}

TEST_F(CurveMessage, NonceFromTheHandshakeIsNotAcceptedAgain) {
    // The server saw INITIATE with nonce 2: a MESSAGE claiming nonce 2 is a replay.
    curve_message_codec early_client{fixed_key(), false, 2, 1};
    const bytes m = seal_body(early_client, 0, payload(5));
    std::uint8_t flags = 0;
    bytes got;
    EXPECT_EQ(server.open(m, flags, got), wire_error::invalid_sequence);
}

TEST_F(CurveMessage, TamperedOctetAnywhereInTheBoxIsRefused) {
    const bytes m = seal_body(client, 0, payload(40));
    for (std::size_t at = 16; at < m.size(); ++at) {
        bytes bad = m;
        bad[at] ^= 0x80;
        std::uint8_t flags = 0;
        bytes got;
        EXPECT_EQ(server.open(bad, flags, got), wire_error::cryptographic) << "octet " << at;
        EXPECT_TRUE(got.empty()) << "no plaintext from a forged box";
    }
    std::uint8_t flags = 0;
    bytes got;
    EXPECT_EQ(server.open(m, flags, got), wire_error::none) << "forgeries do not advance the nonce";
}

TEST_F(CurveMessage, ChangedNonceIsRefused) {
    bytes m = seal_body(client, 0, payload(5));
    m[15] += 1;  // nonce 4 instead of 3: still increasing, but the box was made for 3
    std::uint8_t flags = 0;
    bytes got;
    EXPECT_EQ(server.open(m, flags, got), wire_error::cryptographic);
}

TEST_F(CurveMessage, ReflectedMessageIsRefused) {
    // The server's own MESSAGE sent back to it: other nonce prefix, box does not open.
    const bytes m = seal_body(server, 0, payload(5));
    curve_message_codec other_server{fixed_key(), true, 2, 1};
    std::uint8_t flags = 0;
    bytes got;
    EXPECT_EQ(other_server.open(m, flags, got), wire_error::cryptographic);
}

struct bad_message {
    const char *name;
    bytes body;
    wire_error error;
};

class CurveMessageRefuses : public ::testing::TestWithParam<bad_message> {};

TEST_P(CurveMessageRefuses, WithTheRightError) {
    curve_message_codec server{fixed_key(), true, 2, 2};
    std::uint8_t flags = 0;
    bytes got;
    EXPECT_EQ(server.open(GetParam().body, flags, got), GetParam().error);
}

bytes message_prefix(std::size_t total) {
    bytes b(total, 0);
    std::memcpy(b.data(), "\x07MESSAGE", std::min<std::size_t>(8, total));
    if (total >= 16)
        b[15] = 9;  // nonce 9
    return b;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CurveMessageRefuses,
    ::testing::Values(
        bad_message{"empty", {}, wire_error::malformed_command},
        bad_message{"name_only_size", {7}, wire_error::malformed_command},
        bad_message{"name_past_end", {9, 'M', 'E'}, wire_error::malformed_command},
        bad_message{"other_name", {5, 'H', 'E', 'L', 'L', 'O', 0}, wire_error::unexpected_command},
        bad_message{"name_only", message_prefix(8), wire_error::malformed_message},
        bad_message{"no_box", message_prefix(16), wire_error::malformed_message},
        bad_message{"mac_only", message_prefix(32), wire_error::malformed_message},
        bad_message{"zero_box", message_prefix(33), wire_error::cryptographic}),
    [](const auto &info) { return std::string(info.param.name); });

TEST(CurveMessageNonce, SealRefusesOnceNoncesRunOut) {
    ASSERT_TRUE(curve_box::ready());
    curve_message_codec c{fixed_key(), false, std::numeric_limits<std::uint64_t>::max() - 1, 1};
    bytes out;
    EXPECT_EQ(c.seal(0, payload(1), out), wire_error::none);
    EXPECT_EQ(c.seal(0, payload(1), out), wire_error::nonce_exhausted);
}

}  // namespace
}  // namespace zlink::wire
