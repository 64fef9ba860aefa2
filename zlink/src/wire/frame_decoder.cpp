// Incremental frame decoder: a small state machine over flags -> size -> body.
#include "wire/frame_decoder.hpp"

#include <algorithm>
#include <cstring>

namespace zlink::wire {

frame_decoder::frame_decoder(std::uint64_t max_body_size) noexcept : max_body_(max_body_size) {}

frame_decoder::step frame_decoder::fail(wire_error e) noexcept {
    error_ = e;
    state_ = state::failed;
    return step::error;
}

frame_decoder::step frame_decoder::header_complete() noexcept {
    if (header_.long_size() && header_.size > max_long_body)
        return fail(wire_error::frame_size_overflow);
    if (header_.size > std::numeric_limits<std::size_t>::max())
        return fail(wire_error::frame_size_overflow);
    if (header_.size > max_body_)
        return fail(wire_error::frame_too_large);
    state_ = state::await_body;
    return step::header;
}

frame_decoder::step frame_decoder::decode(std::span<const std::uint8_t> in,
                                          std::size_t &consumed) noexcept {
    consumed = 0;
    for (;;) {
        switch (state_) {
        case state::failed: return step::error;
        case state::await_body:
            // Caller must call set_body() first; consuming now would lose octets.
            return step::header;
        case state::complete: state_ = state::flags; return step::frame;
        case state::flags: {
            if (consumed == in.size())
                return step::need_more;
            const std::uint8_t f = in[consumed++];
            if (f & frame_flag::reserved)
                return fail(wire_error::reserved_flags_set);
            if ((f & frame_flag::command) && (f & frame_flag::more))
                return fail(wire_error::command_with_more);
            header_ = frame_header{f, 0};
            size_bytes_ = header_.long_size() ? 8 : 1;
            state_ = state::size;
            break;
        }
        case state::size:
            while (size_bytes_ > 0 && consumed < in.size()) {
                header_.size = (header_.size << 8) | in[consumed++];
                --size_bytes_;
            }
            if (size_bytes_ > 0)
                return step::need_more;
            return header_complete();
        case state::skip: {
            const std::size_t n = static_cast<std::size_t>(
                std::min<std::uint64_t>(header_.size - filled_, in.size() - consumed));
            filled_ += n;
            consumed += n;
            if (filled_ < header_.size)
                return step::need_more;
            state_ = state::flags;
            return step::frame;
        }
        case state::body: {
            const std::size_t want = body_.size() - filled_;
            const std::size_t n = std::min(want, in.size() - consumed);
            if (n > 0)
                std::memcpy(body_.data() + filled_, in.data() + consumed, n);
            filled_ += n;
            consumed += n;
            if (filled_ < body_.size())
                return step::need_more;
            state_ = state::flags;
            return step::frame;
        }
        }
    }
}

void frame_decoder::set_body(std::span<std::uint8_t> dst) noexcept {
    if (state_ != state::await_body)
        return;
    if (dst.size() != header_.size) {
        // A contract breach by the caller; refuse rather than overrun memory.
        fail(wire_error::buffer_too_small);
        return;
    }
    body_ = dst;
    filled_ = 0;
    state_ = dst.empty() ? state::complete : state::body;
}

void frame_decoder::skip_body() noexcept {
    if (state_ != state::await_body)
        return;
    body_ = {};
    filled_ = 0;
    state_ = header_.size == 0 ? state::complete : state::skip;
}

std::span<std::uint8_t> frame_decoder::body_remaining() const noexcept {
    if (state_ != state::body)
        return {};
    return body_.subspan(filled_);
}

frame_decoder::step frame_decoder::body_filled(std::size_t n) noexcept {
    if (state_ != state::body)
        return state_ == state::failed ? step::error : step::need_more;
    filled_ += std::min(n, body_.size() - filled_);
    if (filled_ < body_.size())
        return step::need_more;
    state_ = state::flags;
    return step::frame;
}

std::size_t frame_decoder::header_bytes_missing() const noexcept {
    if (state_ == state::flags)
        return 1;
    if (state_ == state::size)
        return size_bytes_;
    return 0;
}

}  // namespace zlink::wire
