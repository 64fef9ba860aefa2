// io_object: something a socket owns that lives on an IO thread (listener,
// session).  The socket outlives all of them: each announces its end with
// finished(), which reaches the socket as a command; only then may the
// socket be destroyed (so no IO thread ever posts to a dead socket).
#pragma once
#include <memory>
#include <string>

namespace zlink {

class io_thread;
class socket_base_t;

class io_object : public std::enable_shared_from_this<io_object> {
public:
    io_object(io_thread *thread, socket_base_t *owner);
    virtual ~io_object();
    // Both run on the IO thread.  stop() begins shutdown (honouring LINGER)
    // and must end with finished() exactly once.
    virtual void start() = 0;
    virtual void stop() = 0;
    // From the socket's thread: post start()/stop() to the IO thread.
    void request_start();
    void request_stop();
    io_thread *thread() const { return thread_; }
    socket_base_t *owner() const { return owner_; }
    std::string endpoint;  // as resolved (ZMQ_LAST_ENDPOINT form)

protected:
    void finished();
    bool stopping_ = false;

private:
    io_thread *thread_;
    socket_base_t *owner_;
    bool finished_ = false;
};

}  // namespace zlink
