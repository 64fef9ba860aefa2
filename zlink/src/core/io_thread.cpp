#include "core/io_thread.hpp"

#include <pthread.h>

#include <asio/post.hpp>

namespace zlink {

io_thread::io_thread() : work_(asio::make_work_guard(ioc_)) {}

io_thread::~io_thread() { stop_and_join(); }

void io_thread::start(const char *name) {
    thread_ = std::thread([this] { ioc_.run(); });
    // Named so per-thread profiles (perf, top -H) can tell the threads apart.
    pthread_setname_np(thread_.native_handle(), name);
}

void io_thread::stop_and_join() {
    work_.reset();
    ioc_.stop();
    if (thread_.joinable())
        thread_.join();
}

void io_thread::post(command c) {
    asio::post(ioc_, [c = std::move(c)]() mutable { dispatch(c); });
}

}  // namespace zlink
