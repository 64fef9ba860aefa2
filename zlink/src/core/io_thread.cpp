#include "core/io_thread.hpp"

#include <pthread.h>

#include <asio/posix/stream_descriptor.hpp>
#include <asio/post.hpp>
#include <cstdio>
#include <exception>

namespace zlink {

// Asio makes an io_context's reactor (epoll, eventfd and timerfd descriptors)
// on first use.  Making it here, when the context starts its threads, turns
// descriptor exhaustion into an error of zmq_socket (EMFILE) instead of an
// exception on an IO thread later (the reaper closing a socket at the fd limit).
io_thread::io_thread() : work_(asio::make_work_guard(ioc_)) {
    asio::posix::stream_descriptor reactor_now(ioc_);
}

io_thread::~io_thread() { stop_and_join(); }

void io_thread::start(const char *name) {
    thread_ = std::thread([this] { run_until_stopped(); });
    // Named so per-thread profiles (perf, top -H) can tell the threads apart.
    pthread_setname_np(thread_.native_handle(), name);
}

// A handler that throws (an allocation failing on this thread, a system
// call error turned exception) must not end the process in std::terminate:
// that one operation is dropped, reported, and the thread keeps serving the
// others.  Asio allows run() to be called again after a handler threw.
void io_thread::run_until_stopped() {
    for (;;) {
        try {
            ioc_.run();
            return;
        } catch (const std::exception &e) {
            std::fprintf(stderr, "zlink: an IO thread operation failed and was dropped: %s\n",
                         e.what());
        } catch (...) {
            std::fprintf(stderr, "zlink: an IO thread operation failed and was dropped\n");
        }
    }
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
