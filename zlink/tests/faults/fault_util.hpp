// Shared pieces of the fault tests: a child process running fault_peer (its
// stdout read line by line with a deadline), free tcp ports / ipc paths, and
// small zmq.h helpers. Only the public zmq.h API is used on the zlink side.
#pragma once

#include <zmq.h>

#include "loopback_socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#ifndef FAULT_PEER_PATH
#error "FAULT_PEER_PATH must name the fault_peer helper binary"
#endif

namespace faults {

using clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// fault_peer, started with fork+exec; killed with SIGKILL on destruction if
// still running, so a failing test never leaves a process behind.
class child_process {
public:
    explicit child_process(const std::vector<std::string> &args) {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0)
            return;
        pid_ = ::fork();
        if (pid_ == 0) {
            ::dup2(fds[1], STDOUT_FILENO);
            std::vector<char *> argv;
            static std::string path = FAULT_PEER_PATH;
            argv.push_back(path.data());
            for (auto &a : args)
                argv.push_back(const_cast<char *>(a.c_str()));
            argv.push_back(nullptr);
            ::execv(argv[0], argv.data());
            std::_Exit(127);
        }
        ::close(fds[1]);
        out_ = fds[0];
    }
    ~child_process() {
        if (pid_ > 0 && !reaped_) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        if (out_ >= 0)
            ::close(out_);
    }
    child_process(const child_process &) = delete;
    child_process &operator=(const child_process &) = delete;

    bool started() const { return pid_ > 0 && out_ >= 0; }
    pid_t pid() const { return pid_; }
    void signal(int sig) const { ::kill(pid_, sig); }

    // The next stdout line, or nullopt at EOF / when `timeout` passes.
    std::optional<std::string> read_line(std::chrono::milliseconds timeout) {
        const auto deadline = clock::now() + timeout;
        for (;;) {
            const auto nl = buf_.find('\n');
            if (nl != std::string::npos) {
                std::string line = buf_.substr(0, nl);
                buf_.erase(0, nl + 1);
                return line;
            }
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
            if (left.count() <= 0)
                return std::nullopt;
            pollfd p{out_, POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(left.count())) <= 0)
                continue;
            char chunk[512];
            const ssize_t n = ::read(out_, chunk, sizeof chunk);
            if (n <= 0)
                return std::nullopt;
            buf_.append(chunk, static_cast<size_t>(n));
        }
    }
    // Reads lines until one starts with `prefix` (others, e.g. FIRST, are kept
    // in `seen`); returns that line or nullopt.
    std::optional<std::string> expect_line(const std::string &prefix,
                                           std::chrono::milliseconds timeout,
                                           std::vector<std::string> *seen = nullptr) {
        const auto deadline = clock::now() + timeout;
        for (;;) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
            auto line = read_line(std::max(left, 1ms));
            if (!line)
                return std::nullopt;
            if (line->rfind(prefix, 0) == 0)
                return line;
            if (seen)
                seen->push_back(*line);
            if (line->rfind("ERROR", 0) == 0)
                return line;  // the caller shows it
        }
    }
    // Exit status (WEXITSTATUS) or -1 for a signal / timeout (then killed).
    int wait_exit(std::chrono::milliseconds timeout) {
        const auto deadline = clock::now() + timeout;
        int status = 0;
        while (clock::now() < deadline) {
            const pid_t r = ::waitpid(pid_, &status, WNOHANG);
            if (r == pid_) {
                reaped_ = true;
                return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
            }
            std::this_thread::sleep_for(5ms);
        }
        return -1;
    }
    void kill9() {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        reaped_ = true;
    }

private:
    pid_t pid_ = -1;
    int out_ = -1;
    bool reaped_ = false;
    std::string buf_;
};

// A loopback port nobody listens on right now (the restarted peer must bind
// the same endpoint again, so ":*" cannot be used).
inline int free_tcp_port() { return test_support::loopback_listener{}.port(); }

inline std::string fixed_endpoint(const std::string &transport) {
    static std::atomic<int> n{0};
    if (transport == "tcp")
        return "tcp://127.0.0.1:" + std::to_string(free_tcp_port());
    return "ipc:///tmp/zlink-faults-" + std::to_string(::getpid()) + "-" + std::to_string(n++) +
           ".sock";
}

inline void set_int(void *s, int opt, int v) { zmq_setsockopt(s, opt, &v, sizeof v); }

inline std::string last_endpoint(void *s) {
    char buf[256];
    size_t len = sizeof buf;
    if (zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, buf, &len) != 0)
        return {};
    return std::string(buf, strnlen(buf, len));
}

// All frames of one message; empty on error (errno kept).
inline std::vector<std::string> recv_frames(void *s, int flags = 0) {
    std::vector<std::string> frames;
    int more = 0;
    do {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, s, flags) < 0) {
            zmq_msg_close(&m);
            return {};
        }
        frames.emplace_back(static_cast<const char *>(zmq_msg_data(&m)), zmq_msg_size(&m));
        zmq_msg_close(&m);
        size_t len = sizeof more;
        zmq_getsockopt(s, ZMQ_RCVMORE, &more, &len);
    } while (more);
    return frames;
}

// Sends the attack on a fresh connection; "" if the target closed it (or,
// for a hang-up case, after we closed), else why not.
inline std::string raw_attack(int port, const std::string &bytes, bool we_hang_up) {
    const test_support::unique_fd conn =
        test_support::try_connect_loopback(static_cast<std::uint16_t>(port));
    if (!conn)
        return std::string("connect: ") + std::strerror(errno);
    const int fd = conn.get();
    size_t off = 0;
    while (off < bytes.size()) {
        const ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
        if (n <= 0)
            break;  // already closed on us
        off += static_cast<size_t>(n);
    }
    std::string why;
    if (!we_hang_up) {
        const auto deadline = clock::now() + 5s;
        why = "connection still open after 5 s";
        while (clock::now() < deadline) {
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, 100) <= 0)
                continue;
            char buf[4096];
            const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n == 0 || (n < 0 && errno == ECONNRESET)) {
                why.clear();
                break;
            }  // n > 0: our greeting/READY from the target; keep reading
        }
    }
    return why;
}

inline std::string fault_peer_path() { return FAULT_PEER_PATH; }

}  // namespace faults
