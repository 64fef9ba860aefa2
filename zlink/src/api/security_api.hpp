// What the security mechanisms offer to the rest of the C API.
// Implemented in security_api.cpp, which the security piece owns (issue 11):
// zmq_has("curve") asks here, so it turns true when CURVE lands.
#pragma once

namespace zlink::api {

// True when this build can run the CURVE mechanism (zmq_has("curve")).
bool curve_available() noexcept;

}  // namespace zlink::api
