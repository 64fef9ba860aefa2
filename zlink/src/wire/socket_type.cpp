// Socket-Type names and the RFC 37 compatibility table.
#include "wire/socket_type.hpp"

#include <array>

namespace zlink::wire {

namespace {

constexpr std::array<std::string_view, 12> names = {
    "PAIR",   "PUB",  "SUB",  "REQ",  "REP",  "DEALER",
    "ROUTER", "PULL", "PUSH", "XPUB", "XSUB", "STREAM",
};

}  // namespace

std::string_view socket_type_name(socket_type t) noexcept {
    const auto i = static_cast<std::size_t>(t);
    return i < names.size() ? names[i] : std::string_view("?");
}

std::optional<socket_type> parse_socket_type(std::string_view name) noexcept {
    // STREAM (index 11) is deliberately not parseable: it never appears on the wire.
    for (std::size_t i = 0; i + 1 < names.size(); ++i)
        if (names[i] == name)
            return static_cast<socket_type>(i);
    return std::nullopt;
}

bool compatible(socket_type self, socket_type peer) noexcept {
    using st = socket_type;
    switch (self) {
    case st::pair: return peer == st::pair;
    case st::pub:
    case st::xpub: return peer == st::sub || peer == st::xsub;
    case st::sub:
    case st::xsub: return peer == st::pub || peer == st::xpub;
    case st::req: return peer == st::rep || peer == st::router;
    case st::rep: return peer == st::req || peer == st::dealer;
    case st::dealer: return peer == st::rep || peer == st::dealer || peer == st::router;
    case st::router: return peer == st::req || peer == st::dealer || peer == st::router;
    case st::push: return peer == st::pull;
    case st::pull: return peer == st::push;
    case st::stream: return false;
    }
    return false;
}

}  // namespace zlink::wire
