// io_object: something a socket owns that lives on an IO thread (a listener,
// a session).  The socket outlives all of them: each announces its end with
// finished(), which reaches the socket as an owned_gone command; only then
// may the socket be destroyed (so no IO thread ever posts to a dead socket).
#pragma once
#include <memory>
#include <string>

#include "core/command.hpp"

namespace zlink {

class io_thread;
class socket_base_t;

class io_object : public std::enable_shared_from_this<io_object> {
public:
    io_object(io_thread *thread, socket_base_t *owner);
    virtual ~io_object();
    // Both run on the IO thread.  stop() begins shutdown (honouring LINGER)
    // and must end with finished() exactly once.  stop() may come before
    // start() (the socket closed meanwhile); start() then does nothing.
    virtual void start() = 0;
    virtual void stop() = 0;
    // From the socket's thread: send io_start / io_stop to the IO thread.
    void request_start();
    // close() passes the socket's ZMQ_LINGER as it is at close (libzmq reads
    // it then, not at connect time); keep_linger: the endpoint's own snapshot.
    static constexpr int keep_linger = -2;
    void request_stop(int linger = keep_linger);
    // Runs io_start / io_stop on the IO thread.
    void process(const command &c);
    io_thread *thread() const { return thread_; }
    socket_base_t *owner() const { return owner_; }
    std::string endpoint;  // as resolved (ZMQ_LAST_ENDPOINT form)

protected:
    // Announces the end.  From here on the socket may destroy this object on
    // its own thread at any moment: finished() must be the last touch of
    // *this, unless the caller holds a shared_ptr to it.
    void finished();
    // Sends a command to the owning socket (attach_pipe, hiccup, own).
    void send_to_owner(command c);
    bool stopping_ = false;
    int requested_linger_ = keep_linger;  // from the io_stop command

private:
    io_thread *thread_;
    socket_base_t *owner_;
    bool finished_ = false;
};

}  // namespace zlink
