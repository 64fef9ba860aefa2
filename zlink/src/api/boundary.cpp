#include "api/boundary.hpp"

#include <cstring>
#include <new>
#include <stdexcept>
#include <system_error>

namespace zlink::api {

namespace {

// Asio reports system call failures (epoll_create, socket...) in its own
// "asio.system" category, whose values are errno values on POSIX.  Matched by
// name so that this file needs no Asio header.
bool carries_errno(const std::error_category &c) {
    return c == std::system_category() || c == std::generic_category() ||
           std::strcmp(c.name(), "asio.system") == 0;
}

int errno_of(const std::error_code &code) {
    if (carries_errno(code.category()))
        return code.value() > 0 ? code.value() : EIO;
    // Other categories (Asio's netdb/addrinfo/misc) may still map onto errno.
    std::error_condition portable = code.default_error_condition();
    if (portable.category() == std::generic_category() && portable.value() > 0)
        return portable.value();
    return EIO;
}

}  // namespace

int errno_from_current_exception() noexcept {
    try {
        throw;
    } catch (const std::bad_alloc &) {
        return ENOMEM;
    } catch (const std::length_error &) {
        return ENOMEM;  // a size no container can hold: as good as out of memory
    } catch (const std::system_error &e) {
        return errno_of(e.code());
    } catch (const std::invalid_argument &) {
        return EINVAL;
    } catch (const std::out_of_range &) {
        return EINVAL;
    } catch (...) {
        return EIO;
    }
}

}  // namespace zlink::api
