// The security socket options (ZMQ_MECHANISM, ZMQ_PLAIN_*, ZMQ_CURVE_*,
// ZMQ_ZAP_DOMAIN, ZMQ_ZAP_ENFORCE_DOMAIN) with libzmq 4.3.5's rules: setting a
// PLAIN credential makes the socket a PLAIN client, setting a CURVE key makes it
// CURVE, ZMQ_*_SERVER picks the side (0 falls back to NULL), and reading a key
// returns 32 binary octets or 40 Z85 characters plus NUL depending on the length
// asked. options_t (core/options.*) hands these options here and keeps the
// result in one member; the engine passes `config` to wire::make_handshake().
//
// Differences from libzmq, on purpose: in a build without libsodium every CURVE
// option fails with ENOTSUP (libzmq says EINVAL), so a program that asked for
// encryption never silently gets a NULL connection.
#pragma once

#include "wire/mechanism.hpp"

#include <cstddef>
#include <string>

namespace zlink {

// ZMQ_ZAP_ENFORCE_DOMAIN: in libzmq 4.3.5's draft API (zmq_draft.h) yet accepted by
// every libzmq build at run time, so zlink accepts it too under the same number.
inline constexpr int zap_enforce_domain_option = 93;

struct security_options {
    wire::security_config config;
    std::string zap_domain;
    bool zap_enforce_domain = false;

    // True for the options this struct owns.
    static bool handles(int option) noexcept;
    // 0, or -1 with errno: EINVAL (bad length, value or key), ENOTSUP (CURVE
    // option in a build without libsodium).
    int set(int option, const void *val, std::size_t len);
    int get(int option, void *val, std::size_t *len) const;

    // The config with the ZAP flags filled in from zap_domain / zap_enforce_domain.
    wire::security_config handshake_config() const;
};

}  // namespace zlink
