// The `handoff` way of receiving: the shape every messaging library's receiving side
// has, without the library. One thread reads the socket (blocking reads of up to the
// row's write size) and hands each chunk's length to a second thread, the
// "application", which wakes for it on the same CPU. That second thread keeps the
// receiving CPU busy between reads, so the reader's next wake-up finds the CPU awake
// and more data queued; at 256 KiB over tcp with split pins a library built this way
// (zlink: an IO thread plus the application thread) moved more bytes than a lone
// reading thread, so a ceiling without this shape was not an upper bound.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../common/clock.hpp"
#include "../common/raw_socket.hpp"

namespace bench {

struct HandoffResult {
    std::uint64_t counted_bytes = 0;
    Clock::time_point start, end;  // last warm-up byte read; last counted byte handed over
};

// Reads warm + count bytes from `s` (chunks of at most `chunk`), the counted ones
// timed from the reader's last warm-up byte to the application thread taking the
// last chunk. A peer that closes early: exit 3.
HandoffResult receive_with_handoff(RawSocket &s, std::uint64_t warm, std::uint64_t count,
                                   std::size_t chunk);

}  // namespace bench
