// msg_t: the 64-byte message object behind zmq_msg_t.
//
// Why this layout: small bodies (<= max_inline bytes) live inside the object,
// so sending them costs no heap allocation; larger bodies are one
// reference-counted block (header + data in one malloc), so copies and
// fan-out (PUB) share the bytes; init_data wraps caller memory without
// copying and calls the caller's free function when the last reference goes.
// The reference count is only touched atomically once a body is shared.
// A received message may also point at its connection's metadata_t (the
// properties zmq_msg_gets reads); a message built by the application has none.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>

extern "C" {
typedef void(zmq_free_fn)(void *data_, void *hint_);
}

namespace zlink {

// metadata_t: the properties of one connection (the peer's READY properties
// such as Socket-Type, Identity/Routing-Id and X-* application metadata, plus
// Peer-Address and User-Id), shared by every message received on it.
// Immutable once built; freed with its last reference.
class metadata_t {
public:
    using dict = std::map<std::string, std::string, std::less<>>;
    explicit metadata_t(dict properties) : properties_(std::move(properties)) {}
    // The value, or nullptr.  "Identity" is also answered from "Routing-Id"
    // (libzmq keeps the deprecated name working).
    const char *get(std::string_view name) const;
    void add_ref(int n = 1) noexcept { refs_.fetch_add(n, std::memory_order_relaxed); }
    // Drops one reference; deletes this when it was the last.
    void release() noexcept;

private:
    std::atomic<int> refs_{1};
    dict properties_;
};

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
        more = 1,        // another frame of this message follows
        command = 2,     // ZMTP command frame (engine internal)
        routing_id = 4,  // peer's routing id, first in a new pipe (see pipe_t)
        shared = 128,    // body referenced by more than one msg_t
    };
    enum kind_t : uint8_t { k_inline = 101, k_body, k_const, k_delimiter, k_closed };

    // All init functions leave the object valid; they return 0 or -1/errno.
    int init() noexcept;
    int init_size(size_t size) noexcept;
    int init_data(void *data, size_t size, zmq_free_fn *ffn, void *hint) noexcept;
    int init_const(const void *data, size_t size) noexcept;   // no free, no copy
    int init_buffer(const void *data, size_t size) noexcept;  // copies
    int init_delimiter() noexcept;                            // pipe-internal end-of-stream marker
    int close() noexcept;
    // Moves src into *this (closing *this first); src becomes an empty message.
    int move(msg_t &src) noexcept;
    // Makes *this a copy of src sharing its body (closing *this first).
    int copy(msg_t &src) noexcept;
    // Makes *this (empty or closed) a window [data, data + size) into owner's
    // body block, sharing the block: no allocation, no copy.  How one receive
    // buffer backs many small received messages; the block is freed with its
    // last window (or owner).  owner must hold a heap body (init_size) that
    // contains the window.  -1/EINVAL otherwise.
    int init_window(msg_t &owner, const void *data, size_t size) noexcept;

    void *data() noexcept { return kind_ == k_inline ? static_cast<void *>(u_.inl) : u_.ext.data; }
    const void *data() const noexcept { return const_cast<msg_t *>(this)->data(); }
    size_t size() const noexcept { return kind_ == k_inline ? inline_size_ : u_.ext.size; }
    uint8_t flags() const noexcept { return flags_; }
    void set_flags(uint8_t f) noexcept { flags_ |= f; }
    void reset_flags(uint8_t f) noexcept { flags_ &= static_cast<uint8_t>(~f); }
    bool has_more() const noexcept { return flags_ & more; }
    bool is_command() const noexcept { return flags_ & command; }
    bool is_delimiter() const noexcept { return kind_ == k_delimiter; }
    bool is_shared() const noexcept { return flags_ & shared; }
    bool is_const() const noexcept { return kind_ == k_const; }
    bool valid() const noexcept { return kind_ >= k_inline && kind_ < k_closed; }
    // True when the body is a heap block worth sending by scatter/gather.
    bool is_external() const noexcept { return kind_ == k_body || kind_ == k_const; }

    // Connection metadata: set takes one reference on m (may be null); the
    // message drops it when closed, copies share it, moves carry it.
    void set_metadata(metadata_t *m) noexcept;
    // As set_metadata, but the caller hands over a reference it already holds.
    void adopt_metadata(metadata_t *m) noexcept;
    const metadata_t *metadata() const noexcept { return meta_; }
    // A metadata property, or nullptr (no metadata, or no such property).
    const char *property(std::string_view name) const { return meta_ ? meta_->get(name) : nullptr; }

private:
    union {
        unsigned char inl[max_inline];
        struct {
            msg_body *body;  // null for k_const
            unsigned char *data;
            size_t size;
        } ext;
    } u_;
    metadata_t *meta_;  // null unless received on a connection with properties
    uint8_t inline_size_;
    uint8_t kind_;
    uint8_t flags_;
};

static_assert(sizeof(msg_t) <= 64, "msg_t must fit in zmq_msg_t");

}  // namespace zlink
