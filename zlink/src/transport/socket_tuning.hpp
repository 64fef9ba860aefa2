// socket_tuning: kernel options applied to every new tcp/ipc connection
// (accepted or connected) before its engine starts.
//
// Hook for the api piece: ZMQ_TOS goes into apply_tcp_options (IP_TOS on the
// connection; listeners set it on the acceptor too, as libzmq does).
#pragma once
#include "core/options.hpp"

namespace zlink {

// SO_SNDBUF / SO_RCVBUF when the options set them (>= 0).
void apply_buffer_sizes(int fd, const options_t &opts);
// TCP_NODELAY always; SO_KEEPALIVE and TCP_KEEP{CNT,IDLE,INTVL} as the
// ZMQ_TCP_KEEPALIVE* options say (-1: leave the system default).
void apply_tcp_options(int fd, const options_t &opts);

}  // namespace zlink
