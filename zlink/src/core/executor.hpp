// executor: "run this on the thread that owns the target object".
//
// Every object that owns a pipe end lives on exactly one thread: a socket on
// the application thread that uses it (commands run inside zmq_* calls via
// its mailbox), a session/engine on an IO thread (commands run on that
// thread's io_context).  Cross-thread commands (pipe activation, attach,
// termination) are closures posted to the owner's executor, in FIFO order.
#pragma once
#include <functional>

namespace zlink {

class executor {
public:
    virtual ~executor() = default;
    virtual void post(std::function<void()> fn) = 0;
};

}  // namespace zlink
