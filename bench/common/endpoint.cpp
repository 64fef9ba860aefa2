#include "endpoint.hpp"

#include <charconv>

namespace bench {

namespace {

bool parse_port(std::string_view s, int &port) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), port);
    return !s.empty() && ec == std::errc() && p == s.data() + s.size() && port > 0 && port <= 65535;
}

}  // namespace

std::string Endpoint::text() const {
    if (scheme == "tcp")
        return "tcp://" + host + ":" + port;
    return scheme + "://" + path;
}

bool parse_endpoint(std::string_view text, Endpoint &out, std::string &error) {
    const auto sep = text.find("://");
    out = Endpoint{};
    if (sep == std::string_view::npos) {
        error = "'" + std::string(text) +
                "' is not an endpoint (tcp://HOST:PORT, ipc://PATH or inproc://NAME)";
        return false;
    }
    out.scheme = std::string(text.substr(0, sep));
    const std::string_view rest = text.substr(sep + 3);
    if (out.scheme == "ipc" || out.scheme == "inproc") {
        out.path = std::string(rest);
        if (out.path.empty())
            error = "'" + std::string(text) + "' names no path";
        return error.empty();
    }
    if (out.scheme != "tcp") {
        error =
            "'" + std::string(text) + "': transport '" + out.scheme + "' is not tcp, ipc or inproc";
        return false;
    }
    const auto colon = rest.rfind(':');
    int port = 0;
    if (colon == std::string_view::npos || colon == 0 ||
        (rest.substr(colon + 1) != "*" && !parse_port(rest.substr(colon + 1), port))) {
        error = "'" + std::string(text) + "' is not tcp://HOST:PORT (PORT 1..65535 or *)";
        return false;
    }
    out.host = std::string(rest.substr(0, colon));
    out.port = std::string(rest.substr(colon + 1));
    return true;
}

bool derive_control(const Endpoint &data, Endpoint &out, std::string &error) {
    out = data;
    if (data.scheme == "ipc") {
        out.path = data.path + ".ctl";
        return true;
    }
    int port = 0;
    if (data.scheme != "tcp" || !parse_port(data.port, port) || port == 65535) {
        error = "no control endpoint can be derived from '" + data.text() +
                "' (needs tcp with a fixed port below 65535, or ipc); give --control";
        return false;
    }
    out.port = std::to_string(port + 1);
    return true;
}

std::string rehome(const std::string &bound, const Endpoint &connect) {
    Endpoint b;
    std::string error;
    if (!parse_endpoint(bound, b, error) || b.scheme != "tcp")
        return bound;
    b.host = connect.host;
    return b.text();
}

}  // namespace bench
