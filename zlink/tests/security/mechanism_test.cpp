// make_handshake() picks the mechanism and side from the socket's settings;
// classify_failure() gives the monitor event and value libzmq 4.3.5 reports
// (values from its zmq.h: ZMQ_PROTOCOL_ERROR_*, ZAP status codes, EFAULT).
#include "wire/mechanism.hpp"

#include "zmq.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

namespace zlink::wire {
namespace {

const handshake_options opts{.self = socket_type::dealer};

struct pick {
    const char *name;
    mechanism_kind kind;
    bool as_server;
    const char *mechanism;
    bool greeting_as_server;
};

class Factory : public ::testing::TestWithParam<pick> {};

TEST_P(Factory, PicksMechanismAndSide) {
    const auto &c = GetParam();
    if (c.kind == mechanism_kind::curve && !curve_available())
        GTEST_FAIL() << "CURVE case listed in a build without CURVE";
    security_config sec;
    sec.kind = c.kind;
    sec.as_server = c.as_server;
    auto hs = make_handshake(opts, sec);
    ASSERT_NE(hs, nullptr);
    EXPECT_STREQ(hs->mechanism(), c.mechanism);
    // Our greeting goes out whole only after the peer's signature and version-major.
    const std::uint8_t peer_start[] = {0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 3};
    ASSERT_EQ(hs->feed(peer_start), sizeof peer_start);
    const auto g = hs->outgoing();
    ASSERT_GE(g.size(), greeting_size);
    EXPECT_EQ(std::string(g.begin() + 12, g.begin() + 12 + std::string(c.mechanism).size()),
              c.mechanism);
    EXPECT_EQ(g[32], c.greeting_as_server ? 1 : 0) << "as-server octet of the greeting";
}

std::vector<pick> picks() {
    std::vector<pick> v{{"null", mechanism_kind::null, false, "NULL", false},
                        {"null_server_flag_ignored", mechanism_kind::null, true, "NULL", false},
                        {"plain_client", mechanism_kind::plain, false, "PLAIN", false},
                        {"plain_server", mechanism_kind::plain, true, "PLAIN", true}};
    if (curve_available()) {
        v.push_back({"curve_client", mechanism_kind::curve, false, "CURVE", false});
        v.push_back({"curve_server", mechanism_kind::curve, true, "CURVE", true});
    }
    return v;
}

INSTANTIATE_TEST_SUITE_P(Cases, Factory, ::testing::ValuesIn(picks()),
                         [](const auto &info) { return std::string(info.param.name); });

TEST(Factory, CurveWithoutLibsodiumIsNull) {
    security_config sec;
    sec.kind = mechanism_kind::curve;
    EXPECT_EQ(make_handshake(opts, sec) == nullptr, !curve_available());
}

struct classified {
    wire_error error;
    const char *detail;
    failure_event event;
    std::uint32_t value;
};

class Classify : public ::testing::TestWithParam<classified> {};

TEST_P(Classify, AsLibzmqReportsIt) {
    const auto f = classify_failure(GetParam().error, GetParam().detail);
    EXPECT_EQ(f.event, GetParam().event) << to_string(GetParam().error);
    EXPECT_EQ(f.value, GetParam().value) << to_string(GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, Classify,
    ::testing::Values(
        classified{wire_error::auth_failed, "400", failure_event::auth, 400},
        classified{wire_error::auth_failed, "300", failure_event::auth, 300},
        classified{wire_error::no_zap_handler, "", failure_event::no_detail, EFAULT},
        classified{wire_error::mechanism_mismatch, "", failure_event::protocol,
                   ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH},
        classified{wire_error::cryptographic, "", failure_event::protocol,
                   ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC},
        classified{wire_error::key_exchange, "", failure_event::protocol,
                   ZMQ_PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE},
        classified{wire_error::invalid_sequence, "", failure_event::protocol,
                   ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_SEQUENCE},
        classified{wire_error::malformed_hello, "", failure_event::protocol,
                   ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO},
        classified{wire_error::malformed_welcome, "", failure_event::protocol,
                   ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_WELCOME},
        classified{wire_error::malformed_initiate, "", failure_event::protocol,
                   ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_INITIATE},
        classified{wire_error::malformed_ready, "", failure_event::protocol,
                   ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_READY},
        classified{wire_error::malformed_message, "", failure_event::protocol,
                   ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_MESSAGE},
        classified{wire_error::malformed_error_command, "", failure_event::protocol,
                   ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_ERROR},
        classified{wire_error::malformed_command, "", failure_event::protocol,
                   ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_UNSPECIFIED},
        classified{wire_error::unexpected_command, "", failure_event::protocol,
                   ZMQ_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND},
        classified{wire_error::malformed_metadata, "", failure_event::protocol,
                   ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_METADATA},
        // ZAP values from libzmq's zmq.h (not in zlink's zmq.h, which mirrors the stable API).
        classified{wire_error::zap_malformed_reply, "", failure_event::protocol, 0x20000001},
        classified{wire_error::zap_bad_request_id, "", failure_event::protocol, 0x20000002},
        classified{wire_error::zap_bad_version, "", failure_event::protocol, 0x20000003},
        classified{wire_error::zap_invalid_status_code, "", failure_event::protocol, 0x20000004},
        classified{wire_error::zap_invalid_metadata, "", failure_event::protocol, 0x20000005},
        classified{wire_error::zap_unspecified, "", failure_event::protocol, 0x20000000}));

TEST(ErrorText, EveryKindHasADescription) {
    for (int e = 0; e <= static_cast<int>(wire_error::buffer_too_small); ++e)
        EXPECT_STRNE(to_string(static_cast<wire_error>(e)), "unknown wire error") << e;
}

}  // namespace
}  // namespace zlink::wire
