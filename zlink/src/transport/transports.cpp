#include "transport/transports.hpp"

#include <vector>

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

std::span<const knob_desc> transport_knobs() {
    // Gathered once from the table; a static local is initialised thread-safely.
    static const std::vector<knob_desc> all = [] {
        std::vector<knob_desc> v;
        for (const transport_entry &e : table)
            for (const knob_desc &d : e.ops->knobs())
                v.push_back(d);
        return v;
    }();
    return all;
}

const transport *find_transport(std::string_view scheme) {
    for (const transport_entry &e : table)
        if (scheme == e.scheme)
            return e.ops;
    return nullptr;
}

}  // namespace zlink
