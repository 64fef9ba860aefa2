// Address parsing for tcp and ipc endpoints (text after "tcp://" / "ipc://").
#pragma once
#include <asio/ip/tcp.hpp>
#include <asio/local/stream_protocol.hpp>
#include <string>

namespace zlink {

// "host:port", "[v6]:port", "*:port", "*:*".  0 or -1/EINVAL.
int split_host_port(const std::string &addr, std::string &host, std::string &port);
// Bind side: "*" = any address (IPv6 any with dual stack when ipv6), numeric
// addresses, or a name resolved now.  Port "*" = 0 (ephemeral).
int tcp_bind_endpoint(const std::string &addr, bool ipv6, asio::ip::tcp::endpoint &out);
// "/path", "relative", "@abstract".  Check the text first (check_ipc_address):
// Asio throws for a path longer than sockaddr_un holds.
asio::local::stream_protocol::endpoint ipc_endpoint(const std::string &addr);
// 0, or -1 with ENAMETOOLONG (does not fit sockaddr_un, as libzmq) or EINVAL
// (an empty abstract name "@").
int check_ipc_address(const std::string &addr);
// The ZMQ_LAST_ENDPOINT text for a bound tcp endpoint.
std::string tcp_endpoint_text(const asio::ip::tcp::endpoint &ep);

}  // namespace zlink
