// How the ceiling probe moves bytes through a stream socket. Libraries wait for
// their sockets in different ways (blocking calls, or poll/epoll on non-blocking
// sockets), and the way of waiting changes when and where wake-ups happen (a
// wake-up across CPUs can cost more than the copy). So the probe tries each way and
// keeps the best:
//   blocking  plain blocking send/recv
//   poll      non-blocking sockets, poll() when they would block (event-loop style)
//   coalesce  blocking, but after a read that found little data the reader pauses
//             kCoalesceMicros so the next read finds more: fewer wake-ups and window
//             updates per byte. A library that does work between reads gets this for
//             free (at 256 KiB over tcp with split pins under load it lifted a plain
//             probe from ~700 to ~1000 MB/s, the range zlink reached).
//   handoff   blocking writes; the receiver reads on one thread and hands each chunk
//             to a second thread on the same CPU, as a library's IO thread hands
//             messages to the application (handoff.hpp).
// Spinning on EAGAIN (less than half of blocking) and SO_RCVLOWAT (no gain over
// poll) were tried and are not offered.
#pragma once

#include <cstddef>
#include <string>

#include "../common/raw_socket.hpp"

namespace bench {

enum class IoWait : unsigned { blocking = 0, poll = 1, coalesce = 2, handoff = 3 };
inline constexpr unsigned kIoWaits = 4;
inline constexpr int kCoalesceMicros = 200;

const char *to_string(IoWait w);
bool io_wait_from_string(const std::string &text, IoWait &out);

class StreamIo {
public:
    // Switches `s` to non-blocking for poll; timeout_ms bounds every wait.
    StreamIo(RawSocket &s, IoWait wait, int timeout_ms);
    // At least one byte, at most n; 0 = the peer closed.
    std::size_t read_some(void *data, std::size_t n);
    void write_all(const void *data, std::size_t n);

private:
    void wait_for(short events);
    RawSocket &s_;
    IoWait wait_;
    int timeout_ms_;
};

}  // namespace bench
