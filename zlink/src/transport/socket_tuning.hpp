// socket_tuning: kernel options applied to every new tcp/ipc connection
// (accepted or connected) before its engine starts, and to tcp sockets
// before they bind or connect (ZMQ_TOS, ZMQ_BINDTODEVICE), as libzmq does.
#pragma once
#include "core/options.hpp"

namespace zlink {

// SO_SNDBUF / SO_RCVBUF when the options set them (>= 0).
void apply_buffer_sizes(int fd, const options_t &opts);
// TCP_NODELAY always; SO_KEEPALIVE and TCP_KEEP{CNT,IDLE,INTVL} as the
// ZMQ_TCP_KEEPALIVE* options say (-1: leave the system default);
// TCP_USER_TIMEOUT from ZMQ_TCP_MAXRT; IP_TOS (IPV6_TCLASS) from ZMQ_TOS.
void apply_tcp_options(int fd, const options_t &opts);
// Before bind() or connect() of a tcp socket: ZMQ_BINDTODEVICE and ZMQ_TOS
// (so that the SYN already carries the TOS).
void prepare_tcp_socket(int fd, const options_t &opts);

}  // namespace zlink
