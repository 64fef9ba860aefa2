#include "transport/receive_chunk.hpp"

#include <cstring>

namespace zlink {

bool receive_chunk::prepare(std::size_t batch) {
    if (!has_windows_ && begin_ == end_)
        begin_ = end_ = 0;  // nothing refers to the chunk: start over
    if (chunk_.size() >= end_ + batch && chunk_.size() <= 2 * batches * batch)
        return true;
    msg_t fresh;
    if (fresh.init_size(batches * batch) != 0)
        return false;
    const std::size_t undecoded = end_ - begin_;
    if (undecoded)
        std::memcpy(fresh.data(), bytes() + begin_, undecoded);
    chunk_.close();
    chunk_.move(fresh);
    has_windows_ = false;
    begin_ = 0;
    end_ = undecoded;
    return true;
}

int receive_chunk::cut_window(msg_t &m, std::size_t size) noexcept {
    const int rc = m.init_window(chunk_, bytes() + begin_, size);
    if (rc == 0)
        has_windows_ = true;
    return rc;
}

}  // namespace zlink
