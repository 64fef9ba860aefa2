// The control connection of a two-process (or two-host) run: a plain TCP or
// Unix-domain stream socket between the receiver and the sender process, carrying
// the Link signals as text lines. It is the same code for every library and never
// carries benchmark data.
//
// Its reader thread also makes a dead or silent peer visible: a closed connection
// before the run is finished ends this process with exit 3 at once (naming the
// phase), and heartbeats every 200 ms count as progress for the watchdog, so a
// frozen peer (no heartbeat) trips it after --timeout-ms.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "endpoint.hpp"
#include "link.hpp"
#include "process.hpp"
#include "raw_socket.hpp"

namespace bench {

class SocketLink final : public Link {
public:
    // Receiver side: listens on `ep` and accepts one sender within timeout_ms (exit 3).
    static std::unique_ptr<SocketLink> accept(const Endpoint &ep, int timeout_ms, Watchdog &wd);
    // Sender side: connects to `ep`, retrying for up to timeout_ms (exit 3).
    static std::unique_ptr<SocketLink> connect(const Endpoint &ep, int timeout_ms, Watchdog &wd);
    ~SocketLink() override;

    void post(Signal s, const std::string &payload) override;
    // Tells the peer why this side will not run (it exits 2 with that reason).
    void refuse(const std::string &reason) override;
    // End of run: the peer may close from now on; stops the reader thread.
    void close();

protected:
    Mailbox &inbox() override { return inbox_; }

private:
    SocketLink(RawSocket sock, Watchdog &wd, const char *peer);
    void start_reader();
    void reader_loop();
    void handle_line(const std::string &line);
    void write_line(const std::string &line);
    [[noreturn]] void peer_gone(const std::string &how);

    RawSocket sock_;
    Watchdog &wd_;
    const char *peer_;  // "sender" or "receiver", for messages
    Mailbox inbox_;
    std::mutex write_mutex_;
    std::atomic<bool> finished_{false}, stop_{false};
    std::thread reader_;
};

}  // namespace bench
