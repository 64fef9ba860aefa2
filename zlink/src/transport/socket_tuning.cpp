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
}  // namespace

void apply_buffer_sizes(int fd, const options_t &opts) {
    if (opts.sndbuf >= 0)
        set_int(fd, SOL_SOCKET, SO_SNDBUF, opts.sndbuf);
    if (opts.rcvbuf >= 0)
        set_int(fd, SOL_SOCKET, SO_RCVBUF, opts.rcvbuf);
}

void apply_tcp_options(int fd, const options_t &opts) {
    set_int(fd, IPPROTO_TCP, TCP_NODELAY, 1);
    if (opts.tcp_keepalive == 0) {
        set_int(fd, SOL_SOCKET, SO_KEEPALIVE, 0);
        return;
    }
    if (opts.tcp_keepalive != 1)
        return;
    set_int(fd, SOL_SOCKET, SO_KEEPALIVE, 1);
    if (opts.tcp_keepalive_cnt > 0)
        set_int(fd, IPPROTO_TCP, TCP_KEEPCNT, opts.tcp_keepalive_cnt);
    if (opts.tcp_keepalive_idle > 0)
        set_int(fd, IPPROTO_TCP, TCP_KEEPIDLE, opts.tcp_keepalive_idle);
    if (opts.tcp_keepalive_intvl > 0)
        set_int(fd, IPPROTO_TCP, TCP_KEEPINTVL, opts.tcp_keepalive_intvl);
}

}  // namespace zlink
