#include "core/ctx.hpp"

#include <asio/posix/stream_descriptor.hpp>
#include <asio/steady_timer.hpp>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <system_error>

#include "core/forwarder.hpp"
#include "core/io_thread.hpp"
#include "core/pipe.hpp"
#include "core/socket_base.hpp"
#include "zlink.h"

namespace zlink {

ctx_t::ctx_t() : pid_(::getpid()), knobs_(knobs_t::from_env()) {}

bool ctx_t::forked() const { return ::getpid() != pid_; }

ctx_t::~ctx_t() {
    for (auto &t : io_threads_)
        t->stop_and_join();
    if (reaper_)
        reaper_->stop_and_join();
    tag_ = dead_tag;
}

// Standard options live in ctx_options_t (core/options), zlink's knobs in
// knobs_t.  ZMQ_IO_THREADS, as in libzmq, is accepted any time but only
// counts before the first socket starts the threads.
int ctx_t::set(int option, int value) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (knobs_.set(option, value) == 0)
        return 0;
    return options_.set(option, value);
}

int ctx_t::get(int option) {
    std::lock_guard<std::mutex> lock(mutex_);
    int v = 0;
    if (knobs_.get(option, v) == 0)
        return v;
    return options_.get(option);
}

knobs_t ctx_t::knobs() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return knobs_;
}

ctx_options_t ctx_t::options() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return options_;
}

// "zlink/<role>", after ZMQ_THREAD_NAME_PREFIX and a slash when one is set,
// cut to the kernel's 15 characters.
std::string ctx_t::thread_name(const char *role, int index) const {
    char name[64];
    const std::string &prefix = options_.thread_name_prefix;
    std::snprintf(name, sizeof name, index < 0 ? "%s%szlink/%s" : "%s%szlink/%s/%d", prefix.c_str(),
                  prefix.empty() ? "" : "/", role, index);
    name[15] = '\0';
    return name;
}

// All or nothing: if a thread or its io_context cannot be made (EAGAIN,
// EMFILE), the ones already started are joined again, the exception reaches
// zmq_socket's C boundary as an errno, and a later zmq_socket may retry.
void ctx_t::start_threads_locked() {
    if (started_)
        return;
    std::vector<std::unique_ptr<io_thread>> threads;
    for (int i = 0; i < options_.io_threads; ++i) {
        threads.push_back(std::make_unique<io_thread>());
        threads.back()->start(thread_name("IO", i).c_str());
        options_.apply_to_thread(threads.back()->native_handle());
    }
    auto reaper = std::make_unique<io_thread>();
    reaper->start(thread_name("reaper", -1).c_str());
    io_threads_ = std::move(threads);
    reaper_ = std::move(reaper);
    started_ = true;
}

socket_base_t *ctx_t::create_socket(int type) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (terminating_) {
            errno = ETERM;
            return nullptr;
        }
        if (static_cast<int>(sockets_.size()) >= options_.max_sockets) {
            errno = EMFILE;
            return nullptr;
        }
        start_threads_locked();
    }
    std::unique_ptr<socket_base_t> s(socket_base_t::create(type, this));
    if (!s)
        return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    // insert may throw bad_alloc (the API returns ENOMEM): the new socket is freed then.
    sockets_.insert(s.get());
    return s.release();
}

// How many IO threads can run at the same time: the caller's CPUs (the IO threads
// inherit the affinity of the thread that started them). With every thread of the
// process confined to fewer CPUs than IO threads, a second busy IO thread adds only
// hand-overs between threads on one core, and a round trip through two IO threads
// left one of them runnable-but-waiting behind other work for a whole slice (p99 of
// 1-2 ms, docs/profiling/2026-11-27-background-load.md).
static size_t usable_io_threads(size_t threads) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return threads;
    const int cpus = CPU_COUNT(&set);
    return cpus > 0 && static_cast<size_t>(cpus) < threads ? static_cast<size_t>(cpus) : threads;
}

io_thread *ctx_t::choose_io_thread() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (io_threads_.empty())
        return nullptr;  // ZMQ_IO_THREADS=0: inproc only
    const size_t n = usable_io_threads(io_threads_.size());
    // Least loaded of those that can run at once; ties go round-robin so connections
    // spread evenly.
    io_thread *best = nullptr;
    for (size_t i = 0; i < n; ++i) {
        io_thread *t = io_threads_[(next_thread_ + i) % n].get();
        if (!best || t->load.load() < best->load.load())
            best = t;
    }
    ++next_thread_;
    return best;
}

void ctx_t::close_socket(socket_base_t *s) {
    unregister_inproc_all(s);
    // Post under the lock: reaped() needs it too, so terminate() cannot
    // destroy the reaper while this thread is still inside post().
    std::lock_guard<std::mutex> lock(mutex_);
    reaper_->post(command{command_kind::reap, nullptr, s});
}

void ctx_t::process(const command &c) {
    if (c.kind == command_kind::reap)
        reap(c.socket);
}

// The reaper watches the socket's mailbox fd and runs its commands until the
// socket has finished closing.
void ctx_t::reap(socket_base_t *s) {
    if (s->reap_step()) {
        reaped(s);
        return;
    }
    try {
        watch_until_reaped(s);
    } catch (const std::exception &) {
        reap_by_polling(s);  // out of descriptors or memory: closing must still work
    }
}

void ctx_t::watch_until_reaped(socket_base_t *s) {
    const int fd = ::dup(s->fd());
    if (fd < 0)
        throw std::system_error(errno, std::system_category(), "dup");
    auto sd = std::make_shared<asio::posix::stream_descriptor>(reaper_->ioc(), fd);
    auto wait = std::make_shared<std::function<void()>>();
    *wait = [this, s, sd, wait] {
        sd->async_wait(asio::posix::stream_descriptor::wait_read,
                       [this, s, sd, wait](const asio::error_code &ec) {
                           if (ec)
                               return;
                           if (s->reap_step()) {
                               sd->close();
                               *wait = nullptr;  // break the self-reference
                               reaped(s);
                               return;
                           }
                           (*wait)();
                       });
    };
    (*wait)();
}

// Without a descriptor to wait on (EMFILE when the application closes a
// socket at its fd limit; epoll refusing it), look every few milliseconds.
void ctx_t::reap_by_polling(socket_base_t *s) {
    auto timer = std::make_shared<asio::steady_timer>(reaper_->ioc(), std::chrono::milliseconds(5));
    timer->async_wait([this, s, timer](const asio::error_code &ec) {
        if (ec)
            return;
        if (s->reap_step())
            reaped(s);
        else
            reap_by_polling(s);
    });
}

void ctx_t::reaped(socket_base_t *s) {
    // Under the lock: shutdown() posts to sockets in the set under the same
    // lock, so nobody can be inside s's mailbox while it is destroyed.
    std::lock_guard<std::mutex> lock(mutex_);
    sockets_.erase(s);
    delete s;
    cv_.notify_all();
}

int ctx_t::shutdown() {
    if (forked())
        return 0;  // the sockets' mailboxes are shared with the parent's
    std::lock_guard<std::mutex> lock(mutex_);
    if (terminating_)
        return 0;
    terminating_ = true;
    release_pending_locked();
    for (socket_base_t *s : sockets_)
        s->commands().post(command{command_kind::stop, nullptr, s});
    return 0;
}

// In a forked child the context is abandoned, not finished: no thread of
// ours runs here to reap its sockets, and tearing its Asio objects down would
// deregister the parent's descriptors from the epoll sets both processes
// share.  As libzmq 4.3.5 (whose mailboxes check the pid the same way), the
// call returns -1 with EINTR at once and the memory stays with the child.
int ctx_t::terminate() {
    if (forked()) {
        errno = EINTR;
        return -1;
    }
    shutdown();
    {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [this] { return sockets_.empty(); });
    }
    delete this;
    return 0;
}

int ctx_t::register_inproc(const std::string &name, socket_base_t *s, const options_t &opts) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!inproc_.emplace(name, inproc_binder{s, opts}).second) {
        errno = EADDRINUSE;
        return -1;
    }
    return 0;
}

void ctx_t::unregister_inproc(const std::string &name, socket_base_t *s) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = inproc_.find(name);
    if (it != inproc_.end() && it->second.socket == s)
        inproc_.erase(it);
}

void ctx_t::unregister_inproc_all(socket_base_t *s) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = inproc_.begin(); it != inproc_.end();)
        it = it->second.socket == s ? inproc_.erase(it) : std::next(it);
    // A closing connecter's pending pipe ends stay: what it sent is delivered
    // when the name is bound later, as libzmq does (test_hwm's
    // connect_and_close_first). shutdown() releases those never adopted.
    for (auto &entry : inproc_pending_)
        if (entry.second.connecter == s)
            entry.second.connecter = nullptr;
}

void ctx_t::release_pending_locked() {
    // Never-adopted pipe ends finish on the reaper, dropping their messages.
    for (auto &entry : inproc_pending_) {
        entry.second.bind_end->set_nodelay();
        entry.second.fwd->set_target(reaper_.get());
    }
    inproc_pending_.clear();
}

forwarder *ctx_t::make_forwarder() {
    std::lock_guard<std::mutex> lock(mutex_);
    forwarders_.push_back(std::make_unique<forwarder>());
    return forwarders_.back().get();
}

std::vector<ctx_t::pending_connect> ctx_t::take_pending(const std::string &name) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<pending_connect> out;
    auto range = inproc_pending_.equal_range(name);
    for (auto it = range.first; it != range.second; ++it)
        out.push_back(it->second);
    inproc_pending_.erase(range.first, range.second);
    return out;
}

}  // namespace zlink
