// receive_chunk: the heap block the engine's reads land in, and which part of
// it is still to be decoded.  No socket and no decoder here: the input side
// (transport/engine_input.hpp) reads into read_target(), decodes buffered(),
// and cuts small received frames out as windows (msg_t::init_window), so a
// stream of small messages costs no allocation and no copy per message.
//
// Why a chunk of several batches: a chunk that has windows cut from it is
// never written again from its start (a window may outlive many reads), so
// reading goes on after the last read; a fresh chunk comes only when less than
// one batch is left, or when the batch shrank and the chunk is more than twice
// what it needs (a connection whose traffic turned light gives its streaming
// memory back).  Undecoded bytes move along to the fresh chunk.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/msg.hpp"

namespace zlink {

class receive_chunk {
public:
    // Input batches per chunk.
    static constexpr std::size_t batches = 4;

    receive_chunk() noexcept { chunk_.init(); }
    ~receive_chunk() { chunk_.close(); }
    receive_chunk(const receive_chunk &) = delete;
    receive_chunk &operator=(const receive_chunk &) = delete;

    // Makes room for one read of up to `batch` bytes after the undecoded
    // ones.  false: a fresh chunk could not be allocated (nothing changed).
    bool prepare(std::size_t batch);
    // Where the next read goes and how many bytes it may take (after prepare()).
    std::uint8_t *read_target() noexcept { return bytes() + end_; }
    std::size_t room(std::size_t batch) const noexcept {
        return std::min(chunk_.size() - end_, batch);
    }
    // A read put n bytes at read_target().
    void filled(std::size_t n) noexcept { end_ += n; }

    // The bytes received and not yet decoded.
    std::span<const std::uint8_t> buffered() noexcept { return {bytes() + begin_, end_ - begin_}; }
    std::size_t pending() const noexcept { return end_ - begin_; }
    void consume(std::size_t n) noexcept { begin_ += n; }
    // Forgets what is buffered (a muted connection drops what it reads).
    void discard() noexcept { begin_ = end_ = 0; }

    // Points `m` at the next `size` buffered bytes without copying them (the
    // caller consumes them); `m` keeps the chunk alive.  Returns init_window's
    // result (0: done).
    int cut_window(msg_t &m, std::size_t size) noexcept;

    std::size_t capacity() const noexcept { return chunk_.size(); }

private:
    std::uint8_t *bytes() noexcept { return static_cast<std::uint8_t *>(chunk_.data()); }

    msg_t chunk_;
    bool has_windows_ = false;         // windows were cut from chunk_: never rewrite its start
    std::size_t begin_ = 0, end_ = 0;  // undecoded bytes: [begin_, end_)
};

}  // namespace zlink
