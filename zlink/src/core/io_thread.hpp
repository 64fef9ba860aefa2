// io_thread: one OS thread running one asio::io_context.
// Sessions, engines, listeners and connecters of the sockets assigned to it
// run here; commands to them (and to their pipe ends) are posted to the
// io_context and dispatched in FIFO order.
#pragma once
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <atomic>
#include <thread>

#include "core/executor.hpp"

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

    asio::io_context ioc_{1};
    asio::executor_work_guard<asio::io_context::executor_type> work_;
    std::thread thread_;
};

}  // namespace zlink
