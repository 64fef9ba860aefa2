// io_thread: one OS thread running one asio::io_context.
// Sessions, engines, listeners and connecters of the sockets assigned to it
// run here.  Commands to them (and to their pipe ends) arrive in the thread's
// own mailbox, whose eventfd the io_context watches, and run in FIFO order.
//
// Why not asio::post: posting from another thread takes the io_context's
// mutex and interrupts its epoll_wait while still holding it, so the woken
// IO thread preempts the poster (one core) and blocks on that mutex at once:
// a futex round trip and two extra context switches per wake-up, measured at
// ~1 per message for large messages.  The mailbox writes its eventfd outside
// any lock, once per sleep of the IO thread.
#pragma once
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <atomic>
#include <thread>

#include "core/executor.hpp"
#include "core/mailbox.hpp"

namespace zlink {

class io_thread final : public executor {
public:
    io_thread();
    ~io_thread() override;
    void start(const char *name);  // name: at most 15 characters
    void stop_and_join();
    unsigned long native_handle() { return thread_.native_handle(); }
    void post(command c) override;
    asio::io_context &ioc() { return ioc_; }
    // Rough load figure for choosing a thread (number of live io objects).
    std::atomic<int> load{0};

private:
    void run_until_stopped();
    void wait_for_commands();

    asio::io_context ioc_{1};
    asio::executor_work_guard<asio::io_context::executor_type> work_;
    std::thread thread_;
    mailbox inbox_;
    asio::posix::stream_descriptor inbox_ready_;  // a dup of inbox_.fd()
};

}  // namespace zlink
