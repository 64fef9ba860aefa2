#include "transport/paced_split.hpp"

// linux/tcp.h, not netinet/tcp.h: glibc's tcp_info stops before tcpi_pacing_rate.
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstring>

#include "transport/peer_pause.hpp"

namespace zlink {

namespace {

// The smallest batch that can exceed a tcp segment (IPv4's minimum MSS): smaller
// batches never look anything up.
constexpr std::size_t smallest_segment = 536;

bool pacing_congestion_control(int fd) noexcept {
    char name[16] = {};  // the kernel's TCP_CA_NAME_MAX
    socklen_t len = sizeof name;
    return ::getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) == 0 &&
           std::strncmp(name, "bbr", 3) == 0;
}

// The segment size and pacing rate; false if fd is not a tcp socket.
bool read_info(int fd, std::size_t &mss, std::uint64_t &pacing_rate) noexcept {
    tcp_info info{};
    socklen_t len = sizeof info;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 ||
        len < offsetof(tcp_info, tcpi_pacing_rate) + sizeof info.tcpi_pacing_rate)
        return false;
    mss = info.tcpi_snd_mss;
    pacing_rate = info.tcpi_pacing_rate;
    return true;
}

}  // namespace

bool paced_split::read(int fd, figures &out) noexcept {
    if (!read_info(fd, out.mss, out.pacing_rate))
        return false;
    out.paced = loopback_peer(fd) && pacing_congestion_control(fd);
    return true;
}

std::size_t paced_split::first_write(int fd, std::size_t batch_bytes) noexcept {
    if (paced_ == known::never || batch_bytes <= smallest_segment ||
        (paced_ == known::paced && batch_bytes <= now_.mss))
        return 0;
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_look_) {
        next_look_ = now + refresh_interval;
        const bool ok = paced_ == known::not_yet ? read(fd, now_) && now_.paced
                                                 : read_info(fd, now_.mss, now_.pacing_rate);
        if (!ok) {
            paced_ = known::never;
            return 0;
        }
        paced_ = known::paced;
    }
    return paced_first_write(batch_bytes, now_.mss, now_.pacing_rate);
}

}  // namespace zlink
