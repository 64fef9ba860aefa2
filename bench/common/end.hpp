// One side of a benchmark connection, whatever the pattern or the peer.
//
// The runner only ever talks to two Ends: `a` (the sending side) sends in the
// throughput phase and is the latency client; `b` (the receiving side) receives and,
// in the latency phase, echoes each message back to `a`. Patterns differ only in how
// they build the two Ends (socket types, routing-id frames, PUB/SUB pairs, the plain
// TCP peer of STREAM), so the timing and verification code is the same for all of
// them. The two Ends may live in two threads or in two processes: they coordinate
// only through a Link (link.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "payload.hpp"

namespace bench {

class Link;

struct View {
    const std::uint8_t *data;
    std::size_t size;
};

class End {
public:
    virtual ~End() = default;
    // Sends one message (blocking; a timeout ends the process with status 3).
    virtual void send(const std::uint8_t *data, std::size_t n) = 0;
    // Builds payload `seq` as `maker` makes it (corrupted: the corrupt fault), to be
    // sent by the next send_staged(): two steps, so a round trip's clock starts after
    // the payload is built. By default it is built in the maker's buffer and sent
    // with send(); an End that sends from buffers of its own (zero copy,
    // --send-buffers) builds it there.
    virtual void stage_payload(PayloadMaker &maker, std::uint64_t seq, bool corrupted) {
        staged_ = corrupted ? maker.make_corrupt(seq) : maker.make(seq);
        staged_size_ = maker.size();
    }
    virtual void send_staged() { send(staged_, staged_size_); }
    // Receives the next message; the view stays valid until the next recv/send_back.
    virtual View recv() = 0;
    // The next message if one arrives within wait_ms, else nothing (used where the
    // peer may drop: PUB at a finite HWM). The default blocks like recv().
    virtual std::optional<View> recv_within(int /*wait_ms*/) { return recv(); }
    // Sends the message last returned by recv() back to where it came from.
    virtual void send_back() = 0;
    // Bracket the throughput phase's sends; an End may batch in between (only the
    // plain TCP peer of STREAM does, the way a ZMTP library batches small messages).
    virtual void begin_burst() {}
    virtual void end_burst() {}
    // Makes sure data flows both ways before anything is timed (slow joiners,
    // ROUTER peers not yet known, TCP connects). Each side calls it on its own End;
    // they agree through `link`. Gives up with exit 3 after timeout_ms.
    virtual void establish(Link &link, bool sending_side, int timeout_ms) = 0;

private:
    const std::uint8_t *staged_ = nullptr;
    std::size_t staged_size_ = 0;
};

// What one side of a pattern built: its End and the sockets to close at teardown.
struct Side {
    std::unique_ptr<End> end;
    std::vector<void *> sockets;
    // Receiving side: every endpoint it bound (the first at --bind), as bound; the
    // sending side connects to them in this order.
    std::vector<std::string> bound;
};

}  // namespace bench
