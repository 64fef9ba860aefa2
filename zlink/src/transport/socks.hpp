// The SOCKS5 client's messages (RFC 1928, with RFC 1929 username/password
// authentication), as bytes in and out, without I/O: the connecter's
// handshake (socks_handshake) does the reading and writing.
//
//   client -> proxy   greeting        05 nmethods methods...       (one method: 00 none, 02
//   user/pass) proxy -> client   method choice   05 method                    (FF: none acceptable)
//   client -> proxy   credentials     01 ulen user plen pass       (method 02 only)
//   proxy -> client   auth status     01 status                    (00: accepted)
//   client -> proxy   CONNECT         05 01 00 atyp addr port      (atyp 01 IPv4, 03 name, 04 IPv6)
//   proxy -> client   reply           05 rep 00 atyp addr port     (rep 00: connected)
//
// Every check returns a socks_error; anything but ok fails that connection
// only, and the connecter tries again after its reconnect interval.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace zlink {

enum class socks_error {
    ok,
    malformed,        // a reply that is not SOCKS5 (wrong version, reserved byte, address type)
    no_method,        // the proxy accepts none of the offered methods
    auth_rejected,    // RFC 1929 status not 0
    request_refused,  // CONNECT reply code not 0 (socks_reply_code says which)
    bad_target,       // the destination cannot be encoded (a name over 255 bytes)
};

// An errno for the monitor and the reconnect path (EPROTO, ECONNREFUSED, ...).
int socks_errno(socks_error e);

// The greeting: with credentials it offers only username/password, as libzmq.
std::string socks_greeting(bool with_credentials);
socks_error socks_check_choice(const std::uint8_t reply[2], bool with_credentials);

std::string socks_credentials(const std::string &user, const std::string &password);
socks_error socks_check_auth_status(const std::uint8_t reply[2]);

// CONNECT to host:port; a numeric IPv4 / IPv6 host goes as an address, any
// other text as a domain name for the proxy to resolve.
socks_error socks_connect_request(const std::string &host, std::uint16_t port, std::string &out);

// The reply's length depends on its address: read its first 5 bytes (up to
// the first address byte, the name length for atyp 03), and this says how
// many follow (the rest of the address and the port).
constexpr std::size_t socks_reply_head = 5;
socks_error socks_check_reply_head(const std::uint8_t head[socks_reply_head], std::size_t &rest);

}  // namespace zlink
