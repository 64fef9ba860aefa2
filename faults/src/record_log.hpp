// One fixed-size binary record per message event, appended with one write(2) each:
// what a process logged survives its SIGKILL (the data is in the kernel once write
// returns), so a killed peer's deliveries still count. Read by
// analysis/testbed/faults/records.py (the same layout, 32 bytes, little-endian).
#pragma once

#include <cstdint>
#include <string>

namespace faults {

enum class Kind : std::uint8_t {
    sent = 1,      // zmq_send returned: the message is the library's now
    received = 2,  // a receiver got it (ok: the body checked out)
    reply = 3,     // REQ: the reply to the outstanding request (ok: body + seq match)
    gave_up = 4,   // REQ: no reply after every retry
    retry = 5,     // REQ: a reply timed out; the socket is replaced and the request resent
};

struct Record {
    Kind kind;
    std::uint8_t ok;
    // received by a ROUTER: which connection it came by, 1, 2, ... in the order this
    // process first saw each routing id (0: not known, other patterns). Messages on
    // two connections have no order between them (ZMTP), so the accounting tells a
    // reorder across connections from one on a single connection.
    std::uint16_t conn;
    std::uint32_t epoch;  // the sending process's epoch (as the body says, for received)
    std::uint64_t seq;
    std::int64_t t_ns;  // when it happened (CLOCK_MONOTONIC)
    std::int64_t aux;   // received/reply: the body's sent_ns; sent/retry: the attempt
};
static_assert(sizeof(Record) == 32, "the reader expects 32-byte records");

class RecordLog {
public:
    explicit RecordLog(const std::string &path);
    ~RecordLog();
    RecordLog(const RecordLog &) = delete;
    RecordLog &operator=(const RecordLog &) = delete;

    void add(Kind kind, bool ok, std::uint32_t epoch, std::uint64_t seq, std::int64_t t_ns,
             std::int64_t aux, std::uint16_t conn = 0);

private:
    int fd_ = -1;
};

}  // namespace faults
