// inproc_transport: sockets of one context joined by a pipe pair, no bytes,
// no IO thread.  bind registers a name in the context; connect finds the
// binder and attaches one end to each socket, or (connect before bind)
// leaves the binder's end with the context until a bind adopts it.
// HWM of an inproc pipe is the sum of both sides' limits, as in libzmq.
#pragma once
#include "core/transport.hpp"

namespace zlink {

class inproc_transport final : public transport {
public:
    int bind(socket_base_t &s, const endpoint_t &ep, const std::string &text,
             std::string &resolved) const override;
    int connect(socket_base_t &s, const endpoint_t &ep, const std::string &text) const override;
    int unbind(socket_base_t &s, const endpoint_t &ep, const std::string &text) const override;
    int disconnect(socket_base_t &s, const endpoint_t &ep, const std::string &text) const override;
    bool in_process() const override { return true; }
    // ZMQ_ASIO_*_BATCH_SIZE_INPROC: accepted and answered for compatibility
    // with the published knob set; inproc moves no bytes, so nothing reads them.
    std::span<const knob_desc> knobs() const override;
};

}  // namespace zlink
