// Socket types as ZMTP names them, and the RFC 37 compatibility table.
//
// The numeric values are libzmq's ZMQ_* socket-type constants, so the core can cast
// between its own type and this one without a lookup table.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace zlink::wire {

enum class socket_type : std::uint8_t {
    pair = 0,
    pub = 1,
    sub = 2,
    req = 3,
    rep = 4,
    dealer = 5,
    router = 6,
    pull = 7,
    push = 8,
    xpub = 9,
    xsub = 10,
    stream = 11,  // raw TCP: never speaks ZMTP, never appears on the wire
};

// The Socket-Type property value ("PAIR", "DEALER", ...). STREAM returns "STREAM"
// for diagnostics only; it is never sent.
std::string_view socket_type_name(socket_type t) noexcept;

// Parses a Socket-Type property value. Matching is exact (the RFC grammar is
// upper case); STREAM and draft types (CLIENT, RADIO, ...) yield nullopt.
std::optional<socket_type> parse_socket_type(std::string_view name) noexcept;

// True when ZMTP allows `self` to talk to `peer` (RFC 37 table):
// PAIR-PAIR, PUB-SUB/XSUB, XPUB-SUB/XSUB, SUB-PUB/XPUB, XSUB-PUB/XPUB,
// REQ-REP/ROUTER, REP-REQ/DEALER, DEALER-REP/DEALER/ROUTER,
// ROUTER-REQ/DEALER/ROUTER, PUSH-PULL, PULL-PUSH. STREAM is compatible with nothing.
bool compatible(socket_type self, socket_type peer) noexcept;

// STREAM exchanges raw bytes; every other type runs the ZMTP greeting and handshake.
constexpr bool speaks_zmtp(socket_type t) noexcept { return t != socket_type::stream; }

// libzmq sends the Identity property only for these types (RFC 37: "A REQ, DEALER,
// or ROUTER peer connecting to a ROUTER MAY announce its identity").
constexpr bool sends_identity(socket_type t) noexcept {
    return t == socket_type::req || t == socket_type::dealer || t == socket_type::router;
}

}  // namespace zlink::wire
