// socks_handshake: runs the SOCKS5 exchange (transport/socks.hpp) on a tcp
// connection just made to the proxy, so that afterwards the connection is a
// plain byte stream to the destination, ready for the ZMTP engine.
//
// Exact-length reads only: nothing of the destination's first bytes (the ZMTP
// greeting) is consumed here.  `done` runs once, on the socket's io_context:
// success, an I/O error, or a SOCKS error (errno from socks_errno).  Closing
// the socket aborts a running handshake (done then gets operation_aborted).
#pragma once
#include <asio/generic/stream_protocol.hpp>
#include <cstdint>
#include <functional>
#include <string>

namespace zlink {

struct socks_target {
    std::string host;  // numeric IPv4/IPv6, or a name the proxy resolves
    std::uint16_t port = 0;
    std::string username;  // RFC 1929 authentication when not empty
    std::string password;
};

// The destination of a tcp connect address ("[source;]host:port", brackets
// around an IPv6 host optional, as libzmq reads it for the proxy); false when
// it has no usable host or port.
bool socks_target_of(const std::string &address, socks_target &out);

void socks_handshake(asio::generic::stream_protocol::socket &sock, const socks_target &target,
                     std::function<void(const asio::error_code &)> done);

}  // namespace zlink
