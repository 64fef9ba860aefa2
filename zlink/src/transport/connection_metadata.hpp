// Connection metadata: the properties zmq_msg_gets reads on a received
// message (libzmq 4.3.5's set): the peer's READY properties (Socket-Type,
// Identity, X-* application metadata...), "Peer-Address" (the peer's IP, or
// for ipc ":uid:gid:pid" from SO_PEERCRED), and the private "__fd" behind the
// deprecated ZMQ_SRCFD.  ZAP's User-Id and properties join them when the
// security piece answers ZAP (extra_properties).
//
// metadata_feed hands one reference per received frame.  References are
// taken from the shared count in blocks, so the IO thread touches that
// count once per block rather than once per message (the application thread
// still drops one per message when it closes it).
#pragma once
#include <cstdint>
#include <span>
#include <string>

#include "core/msg.hpp"

namespace zlink {

// libzmq's Peer-Address of a connected socket; empty when unknown.
std::string peer_address(int fd);

// A new metadata_t (one reference, the caller's) from the peer's READY
// properties (ZMTP encoding, may be empty), the peer address and the fd.
metadata_t *make_connection_metadata(std::span<const std::uint8_t> ready_properties,
                                     const std::string &peer_address, int fd,
                                     const metadata_t::dict &extra_properties = {});

class metadata_feed {
public:
    metadata_feed() = default;
    ~metadata_feed() { reset(nullptr); }
    metadata_feed(const metadata_feed &) = delete;
    metadata_feed &operator=(const metadata_feed &) = delete;

    // Takes over `m` (and the reference that comes with it; null: none).
    void reset(metadata_t *m) noexcept;
    // Gives frame one reference, unless it already carries metadata (a frame
    // the pipe refused comes back and is offered again).
    void attach(msg_t &frame) noexcept;

private:
    static constexpr int block = 1024;
    metadata_t *meta_ = nullptr;
    int spare_ = 0;  // references held here, not yet given to a frame
};

}  // namespace zlink
