// fork() and contexts, as libzmq 4.3.5's test_fork uses them: a child process
// inherits a context whose IO threads live only in the parent.  The child
// closes what it inherited (zmq_close returns 0, zmq_ctx_term gives -1/EINTR
// at once, as libzmq) and works with a context of its own; the parent's
// context must be untouched by all of that (the two processes share the
// inherited descriptors, epoll sets included).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "zmq.h"

namespace {

constexpr int messages = 5;

// What the child checks becomes its exit status (gtest assertions do not
// cross fork); each step its own code so a failure says which.
int child_after_fork(void *parent_ctx, void *inherited, const std::string &endpoint) {
    if (zmq_close(inherited) != 0)
        return 10;
    errno = 0;
    if (zmq_ctx_term(parent_ctx) != -1 || errno != EINTR)
        return 11;
    void *ctx = zmq_ctx_new();
    void *push = ctx ? zmq_socket(ctx, ZMQ_PUSH) : nullptr;
    if (!push)
        return 12;
    if (zmq_connect(push, endpoint.c_str()) != 0)
        return 13;
    for (int i = 0; i < messages; ++i)
        if (zmq_send(push, "Hello", 5, 0) != 5)
            return 14;
    if (zmq_close(push) != 0 || zmq_ctx_term(ctx) != 0)  // linger -1: delivers first
        return 15;
    return 0;
}

// The child's exit status, waiting at most 20 s; a child still running then
// (hung in a call that should have returned) is killed and reported as 124.
int wait_for(pid_t pid) {
    int status = 0;
    for (int waited_ms = 0; waited_ms < 20000; waited_ms += 10) {
        const pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (r == -1 && errno != EINTR)
            return -1;
        usleep(10 * 1000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return 124;
}

// Reaps the child however the test ends (an ASSERT returning early included).
struct child_guard {
    pid_t pid;
    int status = -1;
    int exit_code() { return status = wait_for(pid); }
    ~child_guard() {
        if (status == -1 && pid > 0)
            wait_for(pid);
    }
};

std::string bound_endpoint(void *s) {
    char text[256] = {};
    size_t len = sizeof text;
    zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, text, &len);
    return text;
}

TEST(Fork, ChildWithItsOwnContextDeliversToTheParent) {
    void *ctx = zmq_ctx_new();
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    ASSERT_EQ(0, zmq_bind(pull, "tcp://127.0.0.1:*"));
    const std::string endpoint = bound_endpoint(pull);
    int timeout = 5000;
    ASSERT_EQ(0, zmq_setsockopt(pull, ZMQ_RCVTIMEO, &timeout, sizeof timeout));
    // Let the context's threads finish setting up the listener before fork.
    // Without this pause the child hung in 9 of 40 runs under ASan (the test
    // took 25 s: the 5 s receive timeout, then the 20 s wait for the child),
    // 0 of 40 without ASan, and 0 of 40 under ASan with it (2026-11-25).  The
    // likely cause, not traced: GCC 12's ASan allocator takes no lock around
    // fork, so a fork while another thread allocates leaves its lock held in
    // the child.  The child's steps all run after fork, so what the test
    // checks is unchanged.
    usleep(200 * 1000);

    const pid_t pid = fork();
    ASSERT_GE(pid, 0) << std::strerror(errno);
    if (pid == 0)
        _exit(child_after_fork(ctx, pull, endpoint));  // _exit: no gtest teardown in the child
    child_guard child{pid};

    char buf[16];
    for (int i = 0; i < messages; ++i) {
        ASSERT_EQ(5, zmq_recv(pull, buf, sizeof buf, 0))
            << "message " << i << ": " << zmq_strerror(errno);
        EXPECT_EQ(0, std::memcmp(buf, "Hello", 5));
    }
    EXPECT_EQ(0, child.exit_code());
    EXPECT_EQ(0, zmq_close(pull));
    EXPECT_EQ(0, zmq_ctx_term(ctx));
}

// The child's close and term of the inherited context leave the parent's
// sockets and threads working: a tcp round trip inside the parent afterwards.
TEST(Fork, ChildClosingTheInheritedContextLeavesTheParentWorking) {
    void *ctx = zmq_ctx_new();
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    void *push = zmq_socket(ctx, ZMQ_PUSH);
    ASSERT_EQ(0, zmq_bind(pull, "tcp://127.0.0.1:*"));
    ASSERT_EQ(0, zmq_connect(push, bound_endpoint(pull).c_str()));
    int timeout = 5000;
    ASSERT_EQ(0, zmq_setsockopt(pull, ZMQ_RCVTIMEO, &timeout, sizeof timeout));
    char buf[16];
    ASSERT_EQ(3, zmq_send(push, "one", 3, 0));
    ASSERT_EQ(3, zmq_recv(pull, buf, sizeof buf, 0));

    const pid_t pid = fork();
    ASSERT_GE(pid, 0) << std::strerror(errno);
    if (pid == 0) {
        int code = zmq_close(push) == 0 && zmq_close(pull) == 0 ? 0 : 20;
        errno = 0;
        if (code == 0 && (zmq_ctx_term(ctx) != -1 || errno != EINTR))
            code = 21;
        _exit(code);
    }
    child_guard child{pid};
    EXPECT_EQ(0, child.exit_code());

    ASSERT_EQ(3, zmq_send(push, "two", 3, 0));
    ASSERT_EQ(3, zmq_recv(pull, buf, sizeof buf, 0)) << zmq_strerror(errno);
    EXPECT_EQ(0, std::memcmp(buf, "two", 3));
    int zero = 0;
    zmq_setsockopt(push, ZMQ_LINGER, &zero, sizeof zero);
    EXPECT_EQ(0, zmq_close(push));
    EXPECT_EQ(0, zmq_close(pull));
    EXPECT_EQ(0, zmq_ctx_term(ctx));
}

}  // namespace
