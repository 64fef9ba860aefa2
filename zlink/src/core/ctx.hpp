// ctx_t: a zmq context: IO threads, the reaper, the socket registry, the
// inproc endpoint table and the tuning knobs.
//
// Sockets are created and closed by the application; closing hands a socket
// to the reaper thread, which keeps processing its commands until its pipes
// and IO objects (lingering sessions) are finished, then deletes it.
// zmq_ctx_term waits for exactly that, for every socket, then stops the
// threads.
#pragma once
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <sys/types.h>

#include "core/command.hpp"
#include "core/knobs.hpp"
#include "core/options.hpp"

namespace zlink {

class forwarder;
class io_thread;
class pipe_t;
class socket_base_t;

class ctx_t {
public:
    ctx_t();
    ~ctx_t();
    bool check_tag() const { return tag_ == live_tag; }

    int set(int option, int value);
    int get(int option);
    socket_base_t *create_socket(int type);
    void close_socket(socket_base_t *s);  // from zmq_close
    int terminate();                      // zmq_ctx_term (deletes this on success)
    int shutdown();                       // zmq_ctx_shutdown
    // True in a child made by fork() after this context was created: its IO
    // threads and reaper exist only in the parent, and its descriptors (the
    // epoll sets among them) are shared with the parent, so the child must
    // neither wait for those threads nor touch what it inherited.
    bool forked() const;

    io_thread *choose_io_thread();
    // Runs a reaper command (core/command.hpp) on the reaper thread.
    void process(const command &c);
    knobs_t knobs() const;
    ctx_options_t options() const;  // a snapshot (sockets take their defaults from it)

    // inproc: bind registers a name; connect finds the binder or leaves a
    // pending pipe end that the binder adopts (connect-before-bind).
    struct pending_connect {
        socket_base_t *connecter;  // nullptr once it closed (the entry stays)
        pipe_t *bind_end;          // end to attach to the binder
        options_t connecter_opts;
        zlink::forwarder *fwd = nullptr;  // bind_end's executor until bound
    };
    forwarder *make_forwarder();  // lives as long as the context
    struct inproc_binder {
        socket_base_t *socket;
        options_t opts;  // snapshot at bind time (never read live across threads)
    };
    int register_inproc(const std::string &name, socket_base_t *s, const options_t &opts);
    void unregister_inproc(const std::string &name, socket_base_t *s);
    void unregister_inproc_all(socket_base_t *s);
    // Inproc connect: if `name` is bound, runs adopt(binder) and returns true;
    // else stores `pending` (when given) and returns false.  All under the
    // context lock, so a bind cannot slip in between, and the binder cannot be
    // deleted while adopt posts to it: close unregisters a socket's names
    // before the reaper sees it, and reaped() takes this lock.  (A binder
    // looked up first and posted to after the lock was released could be
    // reaped in between: a post into a freed mailbox.)  adopt must not call
    // back into the context.
    template <typename Adopt>
    bool connect_inproc(const std::string &name, const pending_connect *pending, Adopt &&adopt) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = inproc_.find(name);
        if (it != inproc_.end()) {
            adopt(it->second);
            return true;
        }
        if (pending)
            inproc_pending_.emplace(name, *pending);
        return false;
    }
    std::vector<pending_connect> take_pending(const std::string &name);

private:
    static constexpr unsigned live_tag = 0xabadcafe, dead_tag = 0xdeadbeef;
    void start_threads_locked();
    void release_pending_locked();  // zmq_ctx_term/shutdown: drop unadopted connects
    std::string thread_name(const char *role, int index) const;
    void reap(socket_base_t *s);
    void watch_until_reaped(socket_base_t *s);
    void reap_by_polling(socket_base_t *s);
    void reaped(socket_base_t *s);

    unsigned tag_ = live_tag;
    pid_t pid_;  // the creating process, for forked()
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::set<socket_base_t *> sockets_;
    std::vector<std::unique_ptr<io_thread>> io_threads_;
    std::unique_ptr<io_thread> reaper_;
    bool started_ = false;
    bool terminating_ = false;
    ctx_options_t options_;
    knobs_t knobs_;
    unsigned next_thread_ = 0;
    std::map<std::string, inproc_binder> inproc_;
    std::multimap<std::string, pending_connect> inproc_pending_;
    std::vector<std::unique_ptr<forwarder>> forwarders_;
};

}  // namespace zlink
