// ZeroMQ-style endpoints as the harness uses them: what the receiver binds, what
// the sender connects to, and the control endpoint derived from them.
#pragma once

#include <string>
#include <string_view>

namespace bench {

struct Endpoint {
    std::string scheme;  // tcp, ipc or inproc
    std::string host;    // tcp: address or name ("*" = every interface)
    std::string port;    // tcp: number or "*" (ephemeral)
    std::string path;    // ipc: file path; inproc: name
    std::string text() const;
};

// Parses "tcp://HOST:PORT", "ipc://PATH" or "inproc://NAME"; false + error if not.
bool parse_endpoint(std::string_view text, Endpoint &out, std::string &error);

// The control connection of a two-process run sits beside the data endpoint, so a
// runner only has to hand out one endpoint: tcp HOST:PORT -> HOST:PORT+1,
// ipc PATH -> PATH.ctl. A wildcard port has no neighbour: error.
bool derive_control(const Endpoint &data, Endpoint &out, std::string &error);

// A tcp endpoint the receiver bound (e.g. tcp://0.0.0.0:41234), as the sender must
// reach it: the host of the sender's own --connect, the bound port. ipc: unchanged.
std::string rehome(const std::string &bound, const Endpoint &connect);

}  // namespace bench
