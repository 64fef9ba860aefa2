// accept_filter: who may connect to a listener (libzmq 4.3.5's rules).
//
//   tcp  ZMQ_TCP_ACCEPT_FILTER: the peer's address must match one of the
//        masks (none set: everyone).
//   ipc  ZMQ_IPC_FILTER_UID/GID/PID: the peer's credentials (SO_PEERCRED)
//        must match one of the ids, or the peer's user be a member of one
//        of the groups (none set: everyone).
// A refused connection is closed before any ZMTP byte is exchanged.
#pragma once
#include "core/options.hpp"

namespace zlink {

// True when the peer of the accepted socket fd may stay.
bool accept_filter_allows(int fd, const options_t &opts);

}  // namespace zlink
