#include "transport/accept_filter.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>

#include <cstring>

namespace zlink {

namespace {

bool tcp_peer_allowed(const sockaddr *peer, const options_t &opts) {
    if (opts.filters.tcp.empty())
        return true;
    for (const auto &mask : opts.filters.tcp)
        if (mask.matches(peer))
            return true;
    return false;
}

// Is the user `uid` a member of group `gid` (by the group's member list)?
bool user_in_group(uid_t uid, gid_t gid) {
    const passwd *pw = ::getpwuid(uid);
    const group *gr = pw ? ::getgrgid(gid) : nullptr;
    if (!gr)
        return false;
    for (char **member = gr->gr_mem; *member; ++member)
        if (std::strcmp(*member, pw->pw_name) == 0)
            return true;
    return false;
}

bool ipc_peer_allowed(int fd, const options_t &opts) {
    if (opts.filters.ipc_uid.empty() && opts.filters.ipc_gid.empty() &&
        opts.filters.ipc_pid.empty())
        return true;
    ucred cred{};
    socklen_t size = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &size) != 0)
        return false;
    if (opts.filters.ipc_uid.count(cred.uid) || opts.filters.ipc_gid.count(cred.gid) ||
        opts.filters.ipc_pid.count(cred.pid))
        return true;
    for (gid_t gid : opts.filters.ipc_gid)
        if (user_in_group(cred.uid, gid))
            return true;
    return false;
}

}  // namespace

bool accept_filter_allows(int fd, const options_t &opts) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getpeername(fd, reinterpret_cast<sockaddr *>(&ss), &len) != 0)
        return false;  // the peer is already gone
    if (ss.ss_family == AF_UNIX)
        return ipc_peer_allowed(fd, opts);
    return tcp_peer_allowed(reinterpret_cast<const sockaddr *>(&ss), opts);
}

}  // namespace zlink
