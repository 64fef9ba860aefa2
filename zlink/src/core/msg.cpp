#include "core/msg.hpp"

#include <cerrno>
#include <cstdlib>
#include <new>

#include "core/large_blocks.hpp"

namespace zlink {

const char *metadata_t::get(std::string_view name) const {
    auto it = properties_.find(name);
    if (it != properties_.end())
        return it->second.c_str();
    return name == "Identity" ? get("Routing-Id") : nullptr;
}

void metadata_t::release() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1)
        delete this;
}

void msg_t::set_metadata(metadata_t *m) noexcept {
    if (m)
        m->add_ref();
    if (meta_)
        meta_->release();
    meta_ = m;
}

void msg_t::adopt_metadata(metadata_t *m) noexcept {
    if (meta_)
        meta_->release();
    meta_ = m;
}

int msg_t::init() noexcept {
    meta_ = nullptr;
    kind_ = k_inline;
    inline_size_ = 0;
    flags_ = 0;
    return 0;
}

int msg_t::init_size(size_t size) noexcept {
    flags_ = 0;
    meta_ = nullptr;
    if (size <= max_inline) {
        kind_ = k_inline;
        inline_size_ = static_cast<uint8_t>(size);
        return 0;
    }
    // One allocation for header and bytes: halves malloc traffic per message.
    // A size so large that the sum wraps is refused, not under-allocated.
    void *block =
        size <= SIZE_MAX - sizeof(msg_body) ? large_blocks::take(sizeof(msg_body) + size) : nullptr;
    if (!block) {
        init();
        errno = ENOMEM;
        return -1;
    }
    auto *b = new (block) msg_body{{1}, nullptr, nullptr, nullptr, size};
    b->data = reinterpret_cast<unsigned char *>(b + 1);
    kind_ = k_body;
    u_.ext = {b, b->data, size};
    return 0;
}

int msg_t::init_data(void *data, size_t size, zmq_free_fn *ffn, void *hint) noexcept {
    if (!ffn)  // libzmq treats a null free function as constant data
        return init_const(data, size);
    flags_ = 0;
    meta_ = nullptr;
    auto *b = static_cast<msg_body *>(std::malloc(sizeof(msg_body)));
    if (!b) {
        init();
        errno = ENOMEM;
        return -1;
    }
    new (b) msg_body{{1}, ffn, hint, static_cast<unsigned char *>(data), size};
    kind_ = k_body;
    u_.ext = {b, static_cast<unsigned char *>(data), size};
    return 0;
}

int msg_t::init_const(const void *data, size_t size) noexcept {
    flags_ = 0;
    meta_ = nullptr;
    kind_ = k_const;
    u_.ext = {nullptr, static_cast<unsigned char *>(const_cast<void *>(data)), size};
    return 0;
}

int msg_t::init_buffer(const void *data, size_t size) noexcept {
    if (init_size(size) != 0)
        return -1;
    if (size)
        std::memcpy(this->data(), data, size);
    return 0;
}

int msg_t::init_delimiter() noexcept {
    meta_ = nullptr;
    kind_ = k_delimiter;
    inline_size_ = 0;
    flags_ = 0;
    return 0;
}

int msg_t::close() noexcept {
    if (!valid()) {
        errno = EFAULT;
        return -1;
    }
    if (kind_ == k_body) {
        msg_body *b = u_.ext.body;
        // Unshared bodies skip the atomic: only this msg_t can see them.
        if (!(flags_ & shared) || b->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            const bool owns_bytes = !b->ffn;  // header and bytes in one block (init_size)
            if (!owns_bytes)
                b->ffn(b->data, b->hint);
            const size_t block_bytes = sizeof(msg_body) + b->size;
            b->~msg_body();
            if (owns_bytes)
                large_blocks::give(b, block_bytes);
            else
                std::free(b);
        }
    }
    if (meta_) {
        meta_->release();
        meta_ = nullptr;
    }
    kind_ = k_closed;
    return 0;
}

int msg_t::move(msg_t &src) noexcept {
    if (!src.valid()) {
        errno = EFAULT;
        return -1;
    }
    if (this != &src) {
        if (valid())
            close();
        std::memcpy(static_cast<void *>(this), &src, sizeof(msg_t));
        src.init();
    }
    return 0;
}

int msg_t::init_window(msg_t &owner, const void *data, size_t size) noexcept {
    init();
    const auto *p = static_cast<const unsigned char *>(data);
    if (owner.kind_ != k_body || owner.u_.ext.body->ffn || p < owner.u_.ext.data ||
        p + size > owner.u_.ext.data + owner.u_.ext.size) {
        errno = EINVAL;
        return -1;
    }
    msg_body *b = owner.u_.ext.body;
    if (owner.flags_ & shared)
        b->refs.fetch_add(1, std::memory_order_relaxed);
    else {
        b->refs.store(2, std::memory_order_relaxed);  // owner and this window
        owner.flags_ |= shared;
    }
    kind_ = k_body;
    flags_ = shared;
    u_.ext = {b, const_cast<unsigned char *>(p), size};
    return 0;
}

int msg_t::copy(msg_t &src) noexcept {
    if (!src.valid()) {
        errno = EFAULT;
        return -1;
    }
    if (this == &src)
        return 0;
    if (valid())
        close();
    if (src.kind_ == k_body) {
        if (src.flags_ & shared)
            src.u_.ext.body->refs.fetch_add(1, std::memory_order_relaxed);
        else {
            // Becoming shared: the count now counts both holders.
            src.u_.ext.body->refs.store(2, std::memory_order_relaxed);
            src.flags_ |= shared;
        }
    }
    std::memcpy(static_cast<void *>(this), &src, sizeof(msg_t));
    if (meta_)
        meta_->add_ref();
    return 0;
}

}  // namespace zlink
