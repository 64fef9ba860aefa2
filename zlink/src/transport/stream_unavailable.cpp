// Temporary: tcp/ipc land in the next commit; until then they fail honestly.
#include <cerrno>

#include "core/io_object.hpp"
#include "transport/transport.hpp"

namespace zlink {

std::shared_ptr<io_object> make_listener(socket_base_t *, io_thread *, const endpoint_t &,
                                         const options_t &, std::string &) {
    errno = EPROTONOSUPPORT;
    return nullptr;
}

std::shared_ptr<io_object> make_connecter(socket_base_t *, io_thread *, const endpoint_t &,
                                          const options_t &, pipe_t *) {
    errno = EPROTONOSUPPORT;
    return nullptr;
}

}  // namespace zlink
