#include "wire/frame.hpp"

namespace zlink::wire {

std::size_t write_frame_header(std::uint8_t *out, std::uint64_t size, bool more,
                               bool command) noexcept {
    std::uint8_t flags = (more ? frame_flag::more : 0) | (command ? frame_flag::command : 0);
    if (size <= max_short_body) {
        out[0] = flags;
        out[1] = static_cast<std::uint8_t>(size);
        return short_header_size;
    }
    out[0] = flags | frame_flag::long_size;
    for (int i = 0; i < 8; ++i)
        out[1 + i] = static_cast<std::uint8_t>(size >> (56 - 8 * i));
    return long_header_size;
}

}  // namespace zlink::wire
