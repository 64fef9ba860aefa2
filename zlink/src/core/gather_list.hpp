// gather_list: the unwritten part of one output batch (or of one direct write by
// the application, core/direct_send.hpp), as the iovec array a single sendmsg()
// takes.  The engine writes a batch straight from where its bytes live (the
// encoder's staging run for small frames and headers, the message bodies
// themselves for large frames), so a 256 KiB body is never copied on the way
// out.  A partial write moves the list's start to the first unsent byte; the
// next sendmsg goes on from there.
//
// Why not asio::async_write: it copies the buffer sequence into its
// operation (a std::vector copy, one malloc per batch: the third malloc per
// 256 KiB message measured on 2026-11-23), and every write, even one the
// kernel takes at once, completes through the io_context's queue.  Writing
// here is one non-blocking sendmsg; only a full socket buffer waits.
#pragma once
#include <sys/uio.h>

#include <cstddef>
#include <system_error>
#include <vector>

namespace zlink {

class gather_list {
public:
    void clear() noexcept {
        iov_.clear();
        first_ = 0;
    }
    // Room for n entries, so that adding up to n allocates nothing.
    void reserve(std::size_t n) { iov_.reserve(n); }
    // Appends [p, p + n) after what is there; empty runs are skipped.
    void add(const void *p, std::size_t n);
    bool empty() const noexcept { return first_ == iov_.size(); }
    // Bytes not yet written.
    std::size_t pending_bytes() const noexcept;
    // Drops the first n (<= pending_bytes()) unwritten bytes.
    void consume(std::size_t n) noexcept;
    // The unwritten entries, first one trimmed by earlier partial writes.
    const iovec *entries() const noexcept { return iov_.data() + first_; }
    std::size_t entry_count() const noexcept { return iov_.size() - first_; }

    // One non-blocking sendmsg() of at most max_bytes (0 = no cap) from the
    // unwritten entries, on fd; consumes what the kernel took and returns it.
    // When all that is unwritten exceeds the cap by no more than an eighth of
    // it (at most 1 KiB), the call takes it all: no tail call for a header.
    // A full socket buffer is 0 bytes with ec = would_block; a failure is 0
    // bytes with ec set.  Never raises SIGPIPE.
    std::size_t write_to(int fd, std::size_t max_bytes, std::error_code &ec);

private:
    std::vector<iovec> iov_;  // kept between batches: no allocation once warm
    std::size_t first_ = 0;   // first entry with unwritten bytes
};

}  // namespace zlink
