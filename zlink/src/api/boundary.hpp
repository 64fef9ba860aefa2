// The C boundary: no C++ exception ever leaves a zmq_* function.
//
// zlink is C++ inside (std::string, containers, Asio), so allocation failure,
// fd exhaustion or an over-long path can surface as an exception anywhere
// below the API.  A C caller cannot catch one: it would end in std::terminate.
// Every exported function therefore runs its body through guarded(), which
// turns an exception into the function's failure value plus errno, as libzmq
// reports the same conditions:
//   std::bad_alloc, std::length_error      -> ENOMEM
//   std::system_error (system/generic)     -> its errno (EMFILE, ENAMETOOLONG...)
//   std::invalid_argument, std::out_of_range -> EINVAL
//   anything else                          -> EIO (an internal fault zlink
//                                             does not classify; documented
//                                             in zlink/README.md)
// A try block costs nothing on the path that does not throw, so the hot
// functions (zmq_send, zmq_recv, zmq_msg_*) are guarded too.
#pragma once

#include <cerrno>

#define ZLINK_API extern "C" __attribute__((visibility("default")))

namespace zlink::api {

// The errno for the exception being handled; call only inside a catch block.
int errno_from_current_exception() noexcept;

template <typename R, typename Body>
inline R guarded(R failure, Body &&body) noexcept {
    try {
        return body();
    } catch (...) {
        errno = errno_from_current_exception();
        return failure;
    }
}

// For the few void functions (zmq_version, zmq_sleep...): errno tells.
template <typename Body>
inline void guarded_void(Body &&body) noexcept {
    try {
        body();
    } catch (...) {
        errno = errno_from_current_exception();
    }
}

}  // namespace zlink::api
