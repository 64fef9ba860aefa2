// stream_transport: tcp and ipc as the core sees them (core/transport.hpp).
// bind makes a listener, connect a connecting session, both on an IO thread
// and recorded with the socket under the endpoint text; the family supplies
// what differs between tcp and ipc.
#pragma once
#include "core/transport.hpp"
#include "transport/stream_family.hpp"

namespace zlink {

class stream_transport final : public transport {
public:
    explicit stream_transport(const stream_family &family) : family_(family) {}
    int bind(socket_base_t &s, const endpoint_t &ep, const std::string &text,
             std::string &resolved) const override;
    int connect(socket_base_t &s, const endpoint_t &ep, const std::string &text) const override;
    int unbind(socket_base_t &s, const endpoint_t &ep, const std::string &text) const override;
    int disconnect(socket_base_t &s, const endpoint_t &ep, const std::string &text) const override;
    std::span<const knob_desc> knobs() const override { return family_.knobs(); }

private:
    // The socket's options plus the context's batch knobs for this transport.
    options_t endpoint_options(const socket_base_t &s) const;

    const stream_family &family_;
};

}  // namespace zlink
