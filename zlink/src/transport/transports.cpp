#include "transport/transports.hpp"

#include "transport/inproc.hpp"
#include "transport/stream_family.hpp"
#include "transport/stream_transport.hpp"

namespace zlink {

namespace {
const stream_transport tcp(tcp_family());
const stream_transport ipc(ipc_family());
const inproc_transport inproc;

const transport_entry table[] = {
    {"tcp", &tcp},
    {"ipc", &ipc},
    {"inproc", &inproc},
};
}  // namespace

std::span<const transport_entry> transport_table() { return table; }

const transport *find_transport(std::string_view scheme) {
    for (const transport_entry &e : table)
        if (scheme == e.scheme)
            return e.ops;
    return nullptr;
}

}  // namespace zlink
