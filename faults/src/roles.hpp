// The four loops a driver process can run. Each sends or receives until its
// deadlines (Options), logging every message event in the record log, and returns
// how many messages it sent (requests issued) or received.
#pragma once

#include "event_log.hpp"
#include "options.hpp"
#include "record_log.hpp"

#include <cstdint>

namespace faults {

struct Context {
    void *zmq_ctx;
    const Options &options;
    RecordLog &records;
    EventLog &events;
};

// PAIR, PUSH, DEALER (to a ROUTER), PUB: paced one-way stream.
std::uint64_t run_stream_sender(Context &c);
// PAIR, PULL, ROUTER, SUB: receive and check every message.
std::uint64_t run_stream_receiver(Context &c);
// REQ with the lazy-pirate retry: on a reply timeout, close the socket, open a new
// one and resend the same request; give up after `retries` resends.
std::uint64_t run_req_client(Context &c);
// REP: check each request and send it back as the reply.
std::uint64_t run_rep_server(Context &c);

}  // namespace faults
