#include "transport/socket_tuning.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace zlink {

namespace {
// Best effort, as libzmq: a refused option leaves the connection usable.
void set_int(int fd, int level, int name, int value) {
    ::setsockopt(fd, level, name, &value, sizeof value);
}

// Both levels, whichever family the socket is: the other one just fails.
void set_type_of_service(int fd, int tos) {
    if (tos == 0)
        return;
    set_int(fd, IPPROTO_IP, IP_TOS, tos);
    set_int(fd, IPPROTO_IPV6, IPV6_TCLASS, tos);
}
}  // namespace

void apply_buffer_sizes(int fd, const options_t &opts) {
    if (opts.kernel.sndbuf >= 0)
        set_int(fd, SOL_SOCKET, SO_SNDBUF, opts.kernel.sndbuf);
    if (opts.kernel.rcvbuf >= 0)
        set_int(fd, SOL_SOCKET, SO_RCVBUF, opts.kernel.rcvbuf);
}

void apply_ipc_buffer_sizes(int fd, const options_t &opts) {
    if (opts.kernel.sndbuf < 0)
        set_int(fd, SOL_SOCKET, SO_SNDBUF, ipc_default_sndbuf);
    apply_buffer_sizes(fd, opts);
}

void prepare_tcp_socket(int fd, const options_t &opts) {
    if (!opts.kernel.bound_device.empty())
        ::setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, opts.kernel.bound_device.data(),
                     static_cast<socklen_t>(opts.kernel.bound_device.size()));
    set_type_of_service(fd, opts.kernel.tos);
}

void apply_tcp_options(int fd, const options_t &opts) {
    set_int(fd, IPPROTO_TCP, TCP_NODELAY, 1);
    set_type_of_service(fd, opts.kernel.tos);
    if (opts.kernel.tcp_maxrt > 0)
        set_int(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, opts.kernel.tcp_maxrt);
    if (opts.keepalive.enable == 0) {
        set_int(fd, SOL_SOCKET, SO_KEEPALIVE, 0);
        return;
    }
    if (opts.keepalive.enable != 1)
        return;
    set_int(fd, SOL_SOCKET, SO_KEEPALIVE, 1);
    if (opts.keepalive.cnt > 0)
        set_int(fd, IPPROTO_TCP, TCP_KEEPCNT, opts.keepalive.cnt);
    if (opts.keepalive.idle > 0)
        set_int(fd, IPPROTO_TCP, TCP_KEEPIDLE, opts.keepalive.idle);
    if (opts.keepalive.intvl > 0)
        set_int(fd, IPPROTO_TCP, TCP_KEEPINTVL, opts.keepalive.intvl);
}

}  // namespace zlink
