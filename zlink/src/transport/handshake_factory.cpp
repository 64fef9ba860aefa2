#include "transport/handshake_factory.hpp"

#include "wire/mechanism.hpp"

namespace zlink {

// The mechanism and its side come from the security options alone (as in libzmq,
// a connecting socket can be the PLAIN/CURVE server). CURVE in a build without
// libsodium cannot get here: the options refuse it with ENOTSUP.
std::unique_ptr<wire::handshake> make_handshake(const options_t &opts, bool) {
    wire::handshake_options ho;
    ho.self = static_cast<wire::socket_type>(opts.type);
    ho.routing_id = {reinterpret_cast<const uint8_t *>(opts.routing_id.data()),
                     opts.routing_id.size()};
    return wire::make_handshake(ho, opts.security.handshake_config());
}

}  // namespace zlink
