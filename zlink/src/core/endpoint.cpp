#include <cerrno>
#include <cstring>

#include "core/transport.hpp"

namespace zlink {

int parse_endpoint(const char *text, endpoint_t &out, const transport *&tr) {
    const char *sep = text ? std::strstr(text, "://") : nullptr;
    if (!sep || sep == text || sep[3] == '\0') {
        errno = EINVAL;
        return -1;
    }
    out.scheme.assign(text, sep);
    out.address.assign(sep + 3);
    tr = find_transport(out.scheme);
    if (!tr) {
        errno = EPROTONOSUPPORT;
        return -1;
    }
    return 0;
}

}  // namespace zlink
