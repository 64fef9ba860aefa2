#include "core/io_thread.hpp"

#include <future>
#include <string>

#include <pthread.h>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <system_error>
#include <utility>

namespace zlink {

// A descriptor of our own for the inbox's eventfd (asio closes what it owns).
static int dup_or_throw(int fd) {
    int copy = ::dup(fd);
    if (copy < 0)
        throw std::system_error(errno, std::system_category(), "zlink: dup");
    return copy;
}

// Asio makes an io_context's reactor (epoll, eventfd and timerfd descriptors)
// on first use; registering the inbox's descriptor here makes it when the
// context starts its threads, so descriptor exhaustion is an error of
// zmq_socket (EMFILE) instead of an exception on an IO thread later.
io_thread::io_thread()
    : work_(asio::make_work_guard(ioc_)), inbox_ready_(ioc_, dup_or_throw(inbox_.fd())) {}

io_thread::~io_thread() { stop_and_join(); }

void io_thread::start(const char *name) {
    wait_for_commands();
    // Named so per-thread profiles (perf, top -H) can tell the threads apart, and
    // by the thread itself: glibc names another thread by writing
    // /proc/self/task/TID/comm, and with those /proc entries made a process killed
    // with SIGKILL took ~10 ms instead of ~1 ms to be reaped (its parent's waitpid
    // spent it in release_task -> proc_invalidate_siblings_dcache; faults README).
    // start() returns once the name is set, as when the creator set it.
    std::promise<void> named;
    std::future<void> done = named.get_future();
    thread_ = std::thread([this, own = std::string(name), named = std::move(named)]() mutable {
        pthread_setname_np(pthread_self(), own.c_str());
        named.set_value();
        run_until_stopped();
    });
    done.wait();
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

void io_thread::post(command c) { inbox_.post(std::move(c)); }

// Runs the inbox whenever its eventfd turns readable, then waits again (also
// when a command threw: the mailbox has put the rest back and re-signalled).
void io_thread::wait_for_commands() {
    inbox_ready_.async_wait(asio::posix::stream_descriptor::wait_read,
                            [this](const asio::error_code &ec) {
                                if (ec)
                                    return;
                                struct again {
                                    io_thread *t;
                                    ~again() { t->wait_for_commands(); }
                                } rearm{this};
                                inbox_.process(mailbox::on_failure::drop);
                            });
}

}  // namespace zlink
