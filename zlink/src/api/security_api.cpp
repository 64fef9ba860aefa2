// CURVE key helpers of the C API.  Placeholders until the security piece
// (issue 11) brings CURVE: they answer as a libzmq built without a CURVE
// library does (-1, ENOTSUP), and zmq_has("curve") says 0.
#include "api/security_api.hpp"

#include <cerrno>

#include "api/boundary.hpp"
#include "zmq.h"

namespace zlink::api {

bool curve_available() noexcept { return false; }

}  // namespace zlink::api

ZLINK_API int zmq_curve_keypair(char *, char *) {
    errno = ENOTSUP;
    return -1;
}

ZLINK_API int zmq_curve_public(char *, const char *) {
    errno = ENOTSUP;
    return -1;
}
