// make_handshake: the one place that turns a socket's options into a
// wire::handshake.  The engine only ever sees the interface.
//
// Hook for the security piece: PLAIN and CURVE (and their ZAP needs) are
// chosen here from the options (ZMQ_PLAIN_SERVER, ZMQ_CURVE_SERVER, ...);
// `as_server` says which side of the connection this is (accepted
// connections are not necessarily mechanism servers: the options decide).
#pragma once
#include <memory>

#include "core/options.hpp"
#include "wire/handshake.hpp"

namespace zlink {

// A fresh handshake for one ZMTP connection (never for raw/STREAM sockets).
std::unique_ptr<wire::handshake> make_handshake(const options_t &opts, bool accepted);

}  // namespace zlink
