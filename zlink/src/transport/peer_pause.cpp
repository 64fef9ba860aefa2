#include "transport/peer_pause.hpp"

#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>

#include <cstring>

namespace zlink {

namespace {

// The calling thread's CPUs and those of the peer process of unix socket fd.
bool affinities(int fd, cpu_set_t &ours, cpu_set_t &theirs) noexcept {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0)
        return false;
    CPU_ZERO(&ours);
    CPU_ZERO(&theirs);
    return ::sched_getaffinity(0, sizeof ours, &ours) == 0 &&
           ::sched_getaffinity(cred.pid, sizeof theirs, &theirs) == 0;
}

}  // namespace

bool peer_pinned_elsewhere(int fd) noexcept {
    cpu_set_t ours, theirs, both;
    if (!affinities(fd, ours, theirs))
        return false;
    CPU_AND(&both, &ours, &theirs);
    return CPU_COUNT(&theirs) > 0 && CPU_COUNT(&both) == 0;
}

bool is_loopback(const void *address, unsigned length) noexcept {
    sa_family_t family{};
    if (length < sizeof family)
        return false;
    std::memcpy(&family, address, sizeof family);
    if (family == AF_INET && length >= sizeof(sockaddr_in)) {
        sockaddr_in a{};
        std::memcpy(&a, address, sizeof a);
        return (ntohl(a.sin_addr.s_addr) >> 24) == 127;
    }
    if (family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
        sockaddr_in6 a{};
        std::memcpy(&a, address, sizeof a);
        const auto *b = a.sin6_addr.s6_addr;
        if (IN6_IS_ADDR_LOOPBACK(&a.sin6_addr))
            return true;
        return IN6_IS_ADDR_V4MAPPED(&a.sin6_addr) && b[12] == 127;
    }
    return false;
}

bool loopback_peer(int fd) noexcept {
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    return ::getpeername(fd, reinterpret_cast<sockaddr *>(&peer), &len) == 0 &&
           is_loopback(&peer, len);
}

bool loopback_peer_ran_elsewhere(int fd) noexcept {
    if (!loopback_peer(fd))
        return false;
    int cpu = -1;
    socklen_t cpu_len = sizeof cpu;
    if (::getsockopt(fd, SOL_SOCKET, SO_INCOMING_CPU, &cpu, &cpu_len) != 0 || cpu < 0 ||
        cpu >= CPU_SETSIZE)
        return false;
    cpu_set_t ours;
    CPU_ZERO(&ours);
    return ::sched_getaffinity(0, sizeof ours, &ours) == 0 && !CPU_ISSET(cpu, &ours);
}

bool peer_elsewhere(int fd) noexcept {
    return peer_pinned_elsewhere(fd) || loopback_peer_ran_elsewhere(fd);
}

void peer_placement::look(int fd) noexcept {
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_look_) {
        elsewhere_ = peer_elsewhere(fd);
        next_look_ = now + std::chrono::seconds(1);
    }
}

}  // namespace zlink
