#include "transport/socks.hpp"

#include <arpa/inet.h>

#include <cerrno>

namespace zlink {

namespace {
constexpr std::uint8_t version = 0x05, auth_version = 0x01;
constexpr std::uint8_t method_none = 0x00, method_password = 0x02;
constexpr std::uint8_t cmd_connect = 0x01;
constexpr std::uint8_t atyp_ipv4 = 0x01, atyp_name = 0x03, atyp_ipv6 = 0x04;

void put_port(std::string &out, std::uint16_t port) {
    out.push_back(static_cast<char>(port >> 8));
    out.push_back(static_cast<char>(port & 0xff));
}
}  // namespace

int socks_errno(socks_error e) {
    switch (e) {
    case socks_error::ok: return 0;
    case socks_error::no_method:
    case socks_error::auth_rejected: return EACCES;
    case socks_error::request_refused: return ECONNREFUSED;
    case socks_error::bad_target: return EINVAL;
    case socks_error::malformed: break;
    }
    return EPROTO;
}

std::string socks_greeting(bool with_credentials) {
    return {static_cast<char>(version), 1,
            static_cast<char>(with_credentials ? method_password : method_none)};
}

socks_error socks_check_choice(const std::uint8_t reply[2], bool with_credentials) {
    if (reply[0] != version)
        return socks_error::malformed;
    if (reply[1] == (with_credentials ? method_password : method_none))
        return socks_error::ok;
    // 0xFF is the RFC's "no acceptable methods"; any other is one we did not offer.
    return reply[1] == 0xff ? socks_error::no_method : socks_error::malformed;
}

// The zmq options cap both at 255 bytes, the field's limit.
std::string socks_credentials(const std::string &user, const std::string &password) {
    std::string out(1, static_cast<char>(auth_version));
    out.push_back(static_cast<char>(user.size()));
    out += user;
    out.push_back(static_cast<char>(password.size()));
    out += password;
    return out;
}

socks_error socks_check_auth_status(const std::uint8_t reply[2]) {
    if (reply[0] != auth_version)
        return socks_error::malformed;
    return reply[1] == 0 ? socks_error::ok : socks_error::auth_rejected;
}

socks_error socks_connect_request(const std::string &host, std::uint16_t port, std::string &out) {
    out = {static_cast<char>(version), static_cast<char>(cmd_connect), 0};
    unsigned char addr[16];
    if (inet_pton(AF_INET, host.c_str(), addr) == 1) {
        out.push_back(static_cast<char>(atyp_ipv4));
        out.append(reinterpret_cast<const char *>(addr), 4);
    } else if (inet_pton(AF_INET6, host.c_str(), addr) == 1) {
        out.push_back(static_cast<char>(atyp_ipv6));
        out.append(reinterpret_cast<const char *>(addr), 16);
    } else {
        if (host.empty() || host.size() > 255)
            return socks_error::bad_target;
        out.push_back(static_cast<char>(atyp_name));
        out.push_back(static_cast<char>(host.size()));
        out += host;
    }
    put_port(out, port);
    return socks_error::ok;
}

socks_error socks_check_reply_head(const std::uint8_t head[socks_reply_head], std::size_t &rest) {
    if (head[0] != version || head[2] != 0)
        return socks_error::malformed;
    switch (head[3]) {
    case atyp_ipv4: rest = 4 - 1 + 2; break;
    case atyp_ipv6: rest = 16 - 1 + 2; break;
    case atyp_name: rest = std::size_t{head[4]} + 2; break;  // head[4] is the name's length
    default: return socks_error::malformed;
    }
    return head[1] == 0 ? socks_error::ok : socks_error::request_refused;
}

}  // namespace zlink
