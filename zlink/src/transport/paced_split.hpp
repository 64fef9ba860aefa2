// paced_split: over tcp on loopback, when the connection's congestion control
// paces (BBR), a lone batch a little over one segment goes short piece first.
//
// Why: a lone 64 KiB message is 65,545 bytes with its header, one full loopback
// segment (65,483 bytes) and 62 more.  Written in one sendmsg, the kernel sends the
// full segment and holds the 62-byte one until the pacing interval of the first
// has passed (segment / pacing rate).  BBR's pacing rate differs per connection:
// where it was under ~8 GB/s that wait was ~8-10 us, the CPU went idle meanwhile,
// and the pacing timer's wake-up from halt made one-core round trips 26-30 us
// instead of 16-18 (docs/profiling/2026-12-05-tcp-pacing-modes.md).  Writing the
// short piece first leaves nothing behind the full segment: 18-20 us, whatever the
// rate.  It is not free: the peer wakes for the short piece first (+1.5-2 us on one
// core), so it is done only where the wait it avoids is long.
//
// Where the first write is already cut (transport/write_cap.hpp, peer_pause.hpp)
// this rule does not act.  Other tcp peers never split here: over a network the
// batch is many segments and the peer's wake-ups are not ours to count.  Pacing
// done by a qdisc (fq) with another congestion control is not detected.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace zlink {

// The wait behind a full segment this rule avoids: shorter ones are left alone.
inline constexpr std::uint64_t paced_wait_limit_ns = 5000;

// The first write of a lone batch (0: one write for all of it).  mss: the
// connection's segment size; pacing_rate: its pacing rate in bytes per second.
constexpr std::size_t paced_first_write(std::size_t batch_bytes, std::size_t mss,
                                        std::uint64_t pacing_rate) noexcept {
    if (mss == 0 || pacing_rate == 0 || batch_bytes <= mss || batch_bytes >= 2 * mss)
        return 0;
    const std::uint64_t wait_ns = static_cast<std::uint64_t>(mss) * 1'000'000'000u / pacing_rate;
    return wait_ns >= paced_wait_limit_ns ? batch_bytes - mss : 0;
}

// What one connection's socket says about its pacing, looked up again at most
// every refresh_interval (BBR's rate moves; a syscall per batch would cost more
// than the rule saves).  Whether it paces at all (loopback peer, a congestion
// control whose name starts with "bbr") is looked up once.
class paced_split {
public:
    static constexpr std::chrono::milliseconds refresh_interval{100};

    // paced_first_write for a lone batch of batch_bytes on socket fd.
    std::size_t first_write(int fd, std::size_t batch_bytes) noexcept;

    // The socket's figures, for tests and notes: false if fd is not a tcp socket.
    struct figures {
        bool paced = false;  // loopback peer and a pacing congestion control
        std::size_t mss = 0;
        std::uint64_t pacing_rate = 0;  // bytes per second
    };
    static bool read(int fd, figures &out) noexcept;

private:
    enum class known : std::uint8_t { not_yet, paced, never };
    known paced_ = known::not_yet;
    figures now_{};
    std::chrono::steady_clock::time_point next_look_{};
};

}  // namespace zlink
