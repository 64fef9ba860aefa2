#include <cerrno>
#include <cstring>

#include "transport/transport.hpp"

namespace zlink {

int parse_endpoint(const char *text, endpoint_t &out) {
    const char *sep = text ? std::strstr(text, "://") : nullptr;
    if (!sep || sep == text || sep[3] == '\0') {
        errno = EINVAL;
        return -1;
    }
    out.protocol.assign(text, sep);
    out.address.assign(sep + 3);
    if (out.protocol != "tcp" && out.protocol != "ipc" && out.protocol != "inproc") {
        errno = EPROTONOSUPPORT;  // pgm, epgm, tipc, vmci, udp, ws: not in zlink
        return -1;
    }
    return 0;
}

}  // namespace zlink
