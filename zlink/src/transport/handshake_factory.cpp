#include "transport/handshake_factory.hpp"

#include "wire/null_handshake.hpp"

namespace zlink {

std::unique_ptr<wire::handshake> make_handshake(const options_t &opts, bool) {
    wire::handshake_options ho;
    ho.self = static_cast<wire::socket_type>(opts.type);
    ho.routing_id = {reinterpret_cast<const uint8_t *>(opts.routing_id.data()),
                     opts.routing_id.size()};
    return std::make_unique<wire::null_handshake>(ho);
}

}  // namespace zlink
