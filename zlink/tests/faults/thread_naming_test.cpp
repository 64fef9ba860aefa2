// zlink's threads (IO threads, the reaper, zmq_threadstart's) are named by
// themselves, never by the thread that starts them.
//
// Why (faults run 20261202T090133Z-9e56, experiments/faults/README.md): a
// zlink process killed with SIGKILL took a median 12.5 ms to be reaped against
// libzmq's 1.0 ms, and the survivor noticed later and lost more messages. perf
// on the parent: its waitpid spent the time in release_task ->
// proc_invalidate_siblings_dcache -> d_walk. glibc names another thread by
// writing /proc/self/task/TID/comm; with pthread_setname_np made a no-op
// (LD_PRELOAD) the reap took ~1.1 ms, as libzmq's, whose threads name
// themselves (prctl, no /proc).
//
// This binary defines pthread_setname_np itself, so zlink's calls land here
// (an executable's definition comes first); each call is recorded with
// whether it named the calling thread, then passed on to glibc's.
#include <zmq.h>

#include <dlfcn.h>
#include <pthread.h>

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

namespace {

struct naming {
    std::string name;
    bool by_itself;
};

std::mutex calls_mutex;
std::vector<naming> calls;

std::vector<naming> recorded() {
    std::lock_guard<std::mutex> lock(calls_mutex);
    return calls;
}

}  // namespace

extern "C" int pthread_setname_np(pthread_t thread, const char *name) {
    {
        std::lock_guard<std::mutex> lock(calls_mutex);
        calls.push_back({name, pthread_equal(thread, pthread_self()) != 0});
    }
    using fn = int (*)(pthread_t, const char *);
    static const fn next = reinterpret_cast<fn>(dlsym(RTLD_NEXT, "pthread_setname_np"));
    return next ? next(thread, name) : 0;
}

namespace {

void *settle(void *ctx) {  // a socket makes the context start its threads
    void *s = zmq_socket(ctx, ZMQ_PAIR);
    EXPECT_NE(s, nullptr);
    return s;
}

TEST(ThreadNaming, ContextThreadsNameThemselves) {
    void *ctx = zmq_ctx_new();
    void *s = settle(ctx);
    zmq_close(s);
    zmq_ctx_term(ctx);  // joins the threads: every naming call has happened
    const auto seen = recorded();
    ASSERT_FALSE(seen.empty()) << "zlink names its threads (perf, top -H)";
    for (const auto &c : seen)
        EXPECT_TRUE(c.by_itself) << c.name << " was named by another thread";
}

void noop(void *) {}

TEST(ThreadNaming, ThreadstartThreadNamesItself) {
    {
        std::lock_guard<std::mutex> lock(calls_mutex);
        calls.clear();
    }
    void *t = zmq_threadstart(&noop, nullptr);
    ASSERT_NE(t, nullptr);
    zmq_threadclose(t);
    const auto seen = recorded();
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].name, "ZMQapp");
    EXPECT_TRUE(seen[0].by_itself);
}

}  // namespace
