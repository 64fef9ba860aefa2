#include "transport/peer_pause.hpp"

#include <sched.h>
#include <sys/socket.h>

namespace zlink {

bool peer_pinned_elsewhere(int fd) noexcept {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0)
        return false;
    cpu_set_t ours, theirs, both;
    CPU_ZERO(&ours);
    CPU_ZERO(&theirs);
    if (::sched_getaffinity(0, sizeof ours, &ours) != 0 ||
        ::sched_getaffinity(cred.pid, sizeof theirs, &theirs) != 0)
        return false;
    CPU_AND(&both, &ours, &theirs);
    return CPU_COUNT(&theirs) > 0 && CPU_COUNT(&both) == 0;
}

bool peer_placement::elsewhere(int fd) noexcept {
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_look_) {
        elsewhere_ = peer_pinned_elsewhere(fd);
        next_look_ = now + std::chrono::seconds(1);
    }
    return elsewhere_;
}

}  // namespace zlink
