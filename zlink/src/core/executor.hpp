// executor: "run this command on the thread that owns its target".
//
// Every object that owns a pipe end lives on exactly one thread: a socket on
// the application thread that uses it (commands run inside zmq_* calls via
// its mailbox), a session on an IO thread (commands run on that thread's
// io_context). Commands posted to one executor run in FIFO order.
#pragma once
#include "core/command.hpp"

namespace zlink {

class executor {
public:
    virtual ~executor() = default;
    virtual void post(command c) = 0;
};

}  // namespace zlink
