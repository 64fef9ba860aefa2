// Security socket options: setters and getters as libzmq 4.3.5 defines them.
#include "core/security_options.hpp"

#include "wire/z85.hpp"
#include "zmq.h"

#include <cerrno>
#include <cstring>

namespace zlink {

namespace {

constexpr std::size_t max_short_string = 255;  // PLAIN credentials, ZAP domain

// Decided at compile time (the same macro that builds wire/curve_*.cpp), so a unit
// test can compile this file both ways.
#ifdef ZLINK_HAVE_CURVE
constexpr bool curve_built = true;
#else
constexpr bool curve_built = false;
#endif

int invalid() {
    errno = EINVAL;
    return -1;
}

int not_supported() {
    errno = ENOTSUP;
    return -1;
}

bool read_int(const void *val, std::size_t len, int &out) {
    if (!val || len != sizeof(int))
        return false;
    std::memcpy(&out, val, sizeof(int));
    return true;
}

int write_int(void *val, std::size_t *len, int v) {
    if (!val || !len || *len != sizeof(int))
        return invalid();
    std::memcpy(val, &v, sizeof(int));
    return 0;
}

// libzmq: the string plus a NUL; the rest of the caller's buffer is zeroed.
int write_string(void *val, std::size_t *len, const std::string &s) {
    if (!val || !len || *len < s.size() + 1)
        return invalid();
    std::memcpy(val, s.data(), s.size());
    std::memset(static_cast<char *>(val) + s.size(), 0, *len - s.size());
    *len = s.size() + 1;
    return 0;
}

bool is_curve_option(int option) {
    return option == ZMQ_CURVE_SERVER || option == ZMQ_CURVE_PUBLICKEY ||
           option == ZMQ_CURVE_SECRETKEY || option == ZMQ_CURVE_SERVERKEY;
}

constexpr std::size_t z85_key_size = wire::z85_encoded_size(wire::curve_key_size);  // 40

// A key as libzmq takes it: 32 binary octets, 40 Z85 characters, or those 40 plus
// a NUL. Decoded into a copy first, so a bad key leaves the old one untouched.
bool parse_key(const void *val, std::size_t len, wire::curve_key &out) {
    if (!val)
        return false;
    if (len == wire::curve_key_size) {
        std::memcpy(out.data(), val, len);
        return true;
    }
    const auto *text = static_cast<const char *>(val);
    if (len != z85_key_size && !(len == z85_key_size + 1 && text[z85_key_size] == '\0'))
        return false;
    wire::curve_key decoded{};
    if (!wire::z85_decode(decoded.data(), text, z85_key_size))
        return false;
    out = decoded;
    return true;
}

// libzmq: asked for 32 octets, the binary key; for 41, Z85 text and a NUL; else EINVAL.
int write_key(void *val, std::size_t *len, const wire::curve_key &key) {
    if (!val || !len)
        return invalid();
    if (*len == wire::curve_key_size) {
        std::memcpy(val, key.data(), key.size());
        return 0;
    }
    if (*len == z85_key_size + 1 &&
        wire::z85_encode(static_cast<char *>(val), key.data(), key.size()))
        return 0;
    return invalid();
}

}  // namespace

bool security_options::handles(int option) noexcept {
    switch (option) {
    case ZMQ_MECHANISM:
    case ZMQ_PLAIN_SERVER:
    case ZMQ_PLAIN_USERNAME:
    case ZMQ_PLAIN_PASSWORD:
    case ZMQ_CURVE_SERVER:
    case ZMQ_CURVE_PUBLICKEY:
    case ZMQ_CURVE_SECRETKEY:
    case ZMQ_CURVE_SERVERKEY:
    case ZMQ_ZAP_DOMAIN:
    case zap_enforce_domain_option: return true;
    default: return false;
    }
}

int security_options::set(int option, const void *val, std::size_t len) {
    using wire::mechanism_kind;
    if (is_curve_option(option) && !curve_built)
        return not_supported();
    int v = 0;
    const bool is_int = read_int(val, len, v);
    switch (option) {
    case ZMQ_PLAIN_SERVER:
    case ZMQ_CURVE_SERVER: {
        if (!is_int || (v != 0 && v != 1))
            return invalid();
        const auto kind =
            option == ZMQ_PLAIN_SERVER ? mechanism_kind::plain : mechanism_kind::curve;
        config.as_server = v == 1;
        config.kind = v ? kind : mechanism_kind::null;
        return 0;
    }
    case ZMQ_PLAIN_USERNAME:
    case ZMQ_PLAIN_PASSWORD: {
        // libzmq: NULL/0 switches back to NULL; otherwise 1..255 octets make a PLAIN client.
        if (!val && len == 0) {
            config.kind = mechanism_kind::null;
            return 0;
        }
        if (!val || len == 0 || len > max_short_string)
            return invalid();
        auto &field = option == ZMQ_PLAIN_USERNAME ? config.plain_username : config.plain_password;
        field.assign(static_cast<const char *>(val), len);
        config.as_server = false;
        config.kind = mechanism_kind::plain;
        return 0;
    }
    case ZMQ_CURVE_PUBLICKEY:
    case ZMQ_CURVE_SECRETKEY:
    case ZMQ_CURVE_SERVERKEY: {
        auto &key = option == ZMQ_CURVE_PUBLICKEY   ? config.curve_public
                    : option == ZMQ_CURVE_SECRETKEY ? config.curve_secret
                                                    : config.curve_server;
        if (!parse_key(val, len, key))
            return invalid();
        config.kind = mechanism_kind::curve;
        if (option == ZMQ_CURVE_SERVERKEY)
            config.as_server = false;
        return 0;
    }
    case ZMQ_ZAP_DOMAIN:
        // libzmq ("relaxed"): 1..255 octets; there is no way back to empty.
        if (!val || len == 0 || len > max_short_string)
            return invalid();
        zap_domain.assign(static_cast<const char *>(val), len);
        return 0;
    case zap_enforce_domain_option:
        if (!is_int)
            return invalid();
        zap_enforce_domain = v != 0;
        return 0;
    default:  // ZMQ_MECHANISM is read-only
        return invalid();
    }
}

int security_options::get(int option, void *val, std::size_t *len) const {
    using wire::mechanism_kind;
    if (is_curve_option(option) && !curve_built)
        return not_supported();
    switch (option) {
    case ZMQ_MECHANISM: return write_int(val, len, static_cast<int>(config.kind));
    case ZMQ_PLAIN_SERVER:
        return write_int(val, len, config.as_server && config.kind == mechanism_kind::plain);
    case ZMQ_CURVE_SERVER:
        return write_int(val, len, config.as_server && config.kind == mechanism_kind::curve);
    case ZMQ_PLAIN_USERNAME: return write_string(val, len, config.plain_username);
    case ZMQ_PLAIN_PASSWORD: return write_string(val, len, config.plain_password);
    case ZMQ_CURVE_PUBLICKEY: return write_key(val, len, config.curve_public);
    case ZMQ_CURVE_SECRETKEY: return write_key(val, len, config.curve_secret);
    case ZMQ_CURVE_SERVERKEY: return write_key(val, len, config.curve_server);
    case ZMQ_ZAP_DOMAIN: return write_string(val, len, zap_domain);
    case zap_enforce_domain_option: return write_int(val, len, zap_enforce_domain);
    default: return invalid();
    }
}

wire::security_config security_options::handshake_config() const {
    wire::security_config c = config;
    c.zap.domain_set = !zap_domain.empty();
    c.zap.enforce_domain = zap_enforce_domain;
    return c;
}

}  // namespace zlink
