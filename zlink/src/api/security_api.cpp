// CURVE key helpers of the C API (zmq_curve_keypair, zmq_curve_public) and the
// answer to zmq_has("curve"). With libsodium (ZLINK_WITH_CURVE) they are real:
// keys from crypto_box_keypair / crypto_scalarmult_base, as 40-character Z85
// text. Without it they answer as a libzmq built without CURVE does (-1, ENOTSUP).
#include "api/security_api.hpp"

#include <cerrno>
#include <cstring>

#include "api/boundary.hpp"
#include "wire/mechanism.hpp"
#include "wire/z85.hpp"
#include "zmq.h"
#ifdef ZLINK_HAVE_CURVE
#include "wire/curve_box.hpp"
#endif

namespace zlink::api {

bool curve_available() noexcept { return wire::curve_available(); }

}  // namespace zlink::api

#ifdef ZLINK_HAVE_CURVE

namespace {

using zlink::wire::curve_key;
namespace curve_box = zlink::wire::curve_box;

constexpr std::size_t z85_key_chars = zlink::wire::z85_encoded_size(zlink::wire::curve_key_size);

int key_fail(int err) {
    errno = err;
    return -1;
}

}  // namespace

// Both outputs are 41 octets: 40 Z85 characters and a NUL.
ZLINK_API int zmq_curve_keypair(char *z85_public_key, char *z85_secret_key) {
    if (!z85_public_key || !z85_secret_key)
        return key_fail(EINVAL);
    if (!curve_box::ready())
        return key_fail(ENOTSUP);
    curve_key pub{}, sec{};
    curve_box::keypair(pub, sec);
    zlink::wire::z85_encode(z85_public_key, pub.data(), pub.size());
    zlink::wire::z85_encode(z85_secret_key, sec.data(), sec.size());
    curve_box::wipe(sec);
    return 0;
}

// The secret key must be exactly 40 Z85 characters (libzmq would decode any
// multiple of 5 into its 32-octet buffer).
ZLINK_API int zmq_curve_public(char *z85_public_key, const char *z85_secret_key) {
    if (!z85_public_key || !z85_secret_key)
        return key_fail(EINVAL);
    if (!curve_box::ready())
        return key_fail(ENOTSUP);
    curve_key sec{}, pub{};
    if (std::strlen(z85_secret_key) != z85_key_chars ||
        !zlink::wire::z85_decode(sec.data(), z85_secret_key, z85_key_chars))
        return key_fail(EINVAL);
    const bool ok = curve_box::public_of(sec, pub);
    curve_box::wipe(sec);
    if (!ok)
        return key_fail(EINVAL);
    zlink::wire::z85_encode(z85_public_key, pub.data(), pub.size());
    return 0;
}

#else

ZLINK_API int zmq_curve_keypair(char *, char *) {
    errno = ENOTSUP;
    return -1;
}

ZLINK_API int zmq_curve_public(char *, const char *) {
    errno = ENOTSUP;
    return -1;
}

#endif
