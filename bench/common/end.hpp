// One side of a benchmark connection, whatever the pattern or the peer.
//
// The runner only ever talks to two Ends: `a` sends in the throughput phase and is
// the latency client; `b` receives and, in the latency phase, echoes each message
// back to `a`. Patterns differ only in how they build the two Ends (socket types,
// routing-id frames, PUB/SUB pairs, the plain TCP peer of STREAM), so the timing
// and verification code is the same for all of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace bench {

struct View {
    const std::uint8_t* data;
    std::size_t size;
};

class End {
public:
    virtual ~End() = default;
    // Sends one message (blocking; a timeout ends the process with status 3).
    virtual void send(const std::uint8_t* data, std::size_t n) = 0;
    // Receives the next message; the view stays valid until the next recv/send_back.
    virtual View recv() = 0;
    // Sends the message last returned by recv() back to where it came from.
    virtual void send_back() = 0;
    // Bracket the throughput phase's sends; an End may batch in between (only the
    // plain TCP peer of STREAM does, the way a ZMTP library batches small messages).
    virtual void begin_burst() {}
    virtual void end_burst() {}
};

struct Channel {
    std::unique_ptr<End> a, b;
    // Makes sure data flows both ways before anything is timed (slow joiners,
    // ROUTER peers not yet known, TCP connects).
    std::function<void()> establish;
    // Closes every socket of the channel (called before zmq_ctx_term).
    std::function<void()> close;
    // What `a` and `b` are, for the report (e.g. "PUB/SUB pair each way").
    std::string topology;
};

}  // namespace bench
