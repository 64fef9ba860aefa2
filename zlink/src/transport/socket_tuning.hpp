// socket_tuning: kernel options applied to every new tcp/ipc connection
// (accepted or connected) before its engine starts, and to tcp sockets
// before they bind or connect (ZMQ_TOS, ZMQ_BINDTODEVICE), as libzmq does.
#pragma once
#include "core/options.hpp"

namespace zlink {

// SO_SNDBUF / SO_RCVBUF when the options set them (>= 0).
void apply_buffer_sizes(int fd, const options_t &opts);

// What an ipc connection asks for as SO_SNDBUF when ZMQ_SNDBUF is left at -1.
// On a Unix stream socket the sender's buffer alone bounds the bytes in flight
// (SO_RCVBUF is ignored), and the system default (net.core.wmem_default,
// 208 KiB on stock kernels) cannot hold a 256 KiB message: its one write stops
// part way, waits for the reader to drain, and finishes in a second turn. The
// kernel doubles the request (capped by net.core.wmem_max), so 256 KiB asked
// gives 416 KiB-512 KiB and the whole message goes in one write. Measured on
// the 2-core test host (REQ_REP ipc 256 KiB, both ends on one core): round
// trip p50 about 33 us -> 26-27 us; libzmq 4.3.5 given the same buffer stays
// at 32-33 us, so this is zlink's single write meeting room for it.
// docs/profiling/2026-11-25-ipc-send-buffer.md has the runs.
inline constexpr int ipc_default_sndbuf = 256 * 1024;

// apply_buffer_sizes, with ipc_default_sndbuf in place of an unset ZMQ_SNDBUF.
void apply_ipc_buffer_sizes(int fd, const options_t &opts);
// TCP_NODELAY always; SO_KEEPALIVE and TCP_KEEP{CNT,IDLE,INTVL} as the
// ZMQ_TCP_KEEPALIVE* options say (-1: leave the system default);
// TCP_USER_TIMEOUT from ZMQ_TCP_MAXRT; IP_TOS (IPV6_TCLASS) from ZMQ_TOS.
void apply_tcp_options(int fd, const options_t &opts);
// Before bind() or connect() of a tcp socket: ZMQ_BINDTODEVICE and ZMQ_TOS
// (so that the SYN already carries the TOS).
void prepare_tcp_socket(int fd, const options_t &opts);

}  // namespace zlink
