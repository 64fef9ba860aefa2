// msg_t: the 64-byte message object behind zmq_msg_t.
//
// Why this layout: small bodies (<= max_inline bytes) live inside the object,
// so sending them costs no heap allocation; larger bodies are one
// reference-counted block (header + data in one malloc), so copies and
// fan-out (PUB) share the bytes; init_data wraps caller memory without
// copying and calls the caller's free function when the last reference goes.
// The reference count is only touched atomically once a body is shared.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

extern "C" {
typedef void(zmq_free_fn)(void *data_, void *hint_);
}

namespace zlink {

struct msg_body {
    std::atomic<int> refs;
    zmq_free_fn *ffn;  // null: block owns the bytes (allocated after header)
    void *hint;
    unsigned char *data;
    size_t size;
};

class msg_t {
public:
    static constexpr size_t max_inline = 40;
    enum flag_bits : uint8_t {
        more = 1,      // another frame of this message follows
        command = 2,   // ZMTP command frame (engine internal)
        routing_id = 4,  // peer's routing id, first in a new pipe (see pipe_t)
        shared = 128,  // body referenced by more than one msg_t
    };
    enum kind_t : uint8_t { k_inline = 101, k_body, k_const, k_delimiter, k_closed };

    // All init functions leave the object valid; they return 0 or -1/errno.
    int init() noexcept;
    int init_size(size_t size) noexcept;
    int init_data(void *data, size_t size, zmq_free_fn *ffn, void *hint) noexcept;
    int init_const(const void *data, size_t size) noexcept;  // no free, no copy
    int init_buffer(const void *data, size_t size) noexcept;  // copies
    int init_delimiter() noexcept;  // pipe-internal end-of-stream marker
    int close() noexcept;
    // Moves src into *this (closing *this first); src becomes an empty message.
    int move(msg_t &src) noexcept;
    // Makes *this a copy of src sharing its body (closing *this first).
    int copy(msg_t &src) noexcept;

    void *data() noexcept {
        return kind_ == k_inline ? static_cast<void *>(u_.inl) : u_.ext.data;
    }
    const void *data() const noexcept { return const_cast<msg_t *>(this)->data(); }
    size_t size() const noexcept { return kind_ == k_inline ? inline_size_ : u_.ext.size; }
    uint8_t flags() const noexcept { return flags_; }
    void set_flags(uint8_t f) noexcept { flags_ |= f; }
    void reset_flags(uint8_t f) noexcept { flags_ &= static_cast<uint8_t>(~f); }
    bool has_more() const noexcept { return flags_ & more; }
    bool is_command() const noexcept { return flags_ & command; }
    bool is_delimiter() const noexcept { return kind_ == k_delimiter; }
    bool is_shared() const noexcept { return flags_ & shared; }
    bool valid() const noexcept { return kind_ >= k_inline && kind_ < k_closed; }
    // True when the body is a heap block worth sending by scatter/gather.
    bool is_external() const noexcept { return kind_ == k_body || kind_ == k_const; }

private:
    union {
        unsigned char inl[max_inline];
        struct {
            msg_body *body;  // null for k_const
            unsigned char *data;
            size_t size;
        } ext;
    } u_;
    uint8_t inline_size_;
    uint8_t kind_;
    uint8_t flags_;
};

static_assert(sizeof(msg_t) <= 64, "msg_t must fit in zmq_msg_t");

}  // namespace zlink
