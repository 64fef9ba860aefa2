// large_message_bytes: from this size on an inproc writer bounds its run-ahead
// (core/pipe.cpp).
//
// A blocking send, recv or zmq_poll no longer yields its core before it sleeps.
// The yield was a bet that the only other runnable thread on the core is our
// peer; on a host with any other work it hands the core to that work for a whole
// time slice (EEVDF: ~3 ms whatever its nice level): tcp 64 B REQ/REP with a core
// per side, p50 37-105 us against libzmq's 33-36 and 30-35 without the yield;
// PUSH/PULL at HWM 1000, 1.6-4.4 M msg/s against 5.6-8.6 M without it.
// docs/profiling/2026-11-26-yield-under-load.md.
#pragma once
#include <cstddef>

namespace zlink {

// Below it, a time slice's worth of messages is little memory; above it, megabytes.
constexpr std::size_t large_message_bytes = 32 * 1024;

}  // namespace zlink
