#include "transport/address.hpp"

#include <cerrno>
#include <cstdlib>

#include <sys/un.h>

namespace zlink {

int split_host_port(const std::string &addr, std::string &host, std::string &port) {
    auto colon = addr.rfind(':');
    if (colon == std::string::npos || colon + 1 >= addr.size()) {
        errno = EINVAL;
        return -1;
    }
    host = addr.substr(0, colon);
    port = addr.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    if (host.empty()) {
        errno = EINVAL;
        return -1;
    }
    if (port != "*") {
        char *end = nullptr;
        long p = std::strtol(port.c_str(), &end, 10);
        if (*end != '\0' || p < 0 || p > 65535) {
            errno = EINVAL;
            return -1;
        }
    }
    return 0;
}

int tcp_bind_endpoint(const std::string &addr, bool ipv6, asio::ip::tcp::endpoint &out) {
    std::string host, port;
    if (split_host_port(addr, host, port) != 0)
        return -1;
    unsigned short p = port == "*" ? 0 : static_cast<unsigned short>(std::atoi(port.c_str()));
    if (host == "*") {
        out = ipv6 ? asio::ip::tcp::endpoint(asio::ip::tcp::v6(), p)
                   : asio::ip::tcp::endpoint(asio::ip::tcp::v4(), p);
        return 0;
    }
    asio::error_code ec;
    auto a = asio::ip::make_address(host, ec);
    if (!ec) {
        if (a.is_v6() && !ipv6) {
            errno = EINVAL;  // as libzmq: IPv6 addresses need ZMQ_IPV6
            return -1;
        }
        out = asio::ip::tcp::endpoint(a, p);
        return 0;
    }
    // A host name (e.g. localhost): resolve now, first acceptable address.
    asio::io_context ioc;
    asio::ip::tcp::resolver r(ioc);
    auto results = r.resolve(host, "", ec);
    if (!ec)
        for (const auto &e : results)
            if (ipv6 || e.endpoint().address().is_v4()) {
                out = asio::ip::tcp::endpoint(e.endpoint().address(), p);
                return 0;
            }
    errno = ENODEV;  // libzmq's answer for an unknown interface/host on bind
    return -1;
}

int check_ipc_address(const std::string &addr) {
    if (addr == "@") {
        errno = EINVAL;
        return -1;
    }
    // libzmq's rule: the text (with the '@' of an abstract name) must leave
    // room for a terminating NUL in sun_path.
    if (addr.size() >= sizeof(sockaddr_un::sun_path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

asio::local::stream_protocol::endpoint ipc_endpoint(const std::string &addr) {
    if (!addr.empty() && addr[0] == '@')
        return asio::local::stream_protocol::endpoint(std::string(1, '\0') + addr.substr(1));
    return asio::local::stream_protocol::endpoint(addr);
}

std::string tcp_endpoint_text(const asio::ip::tcp::endpoint &ep) {
    auto a = ep.address();
    std::string host = a.is_v6() ? "[" + a.to_string() + "]" : a.to_string();
    return "tcp://" + host + ":" + std::to_string(ep.port());
}

}  // namespace zlink
