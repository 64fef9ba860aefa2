#include "core/io_object.hpp"

#include "core/io_thread.hpp"
#include "core/socket_base.hpp"

namespace zlink {

io_object::io_object(io_thread *thread, socket_base_t *owner)
    : thread_(thread), owner_(owner) {
    owner_->owned_count.fetch_add(1, std::memory_order_relaxed);
    thread_->load.fetch_add(1, std::memory_order_relaxed);
}

// An object that never reached finished() (it failed before it was started,
// e.g. a bind error or an exception while it was being set up) gives its
// ownership count back here, or its socket could never be reaped.
io_object::~io_object() {
    thread_->load.fetch_sub(1, std::memory_order_relaxed);
    if (!finished_)
        owner_->owned_count.fetch_sub(1, std::memory_order_relaxed);
}

void io_object::request_start() {
    auto self = shared_from_this();
    thread_->post([self] { self->start(); });
}

void io_object::request_stop() {
    auto self = shared_from_this();
    thread_->post([self] {
        if (!self->stopping_) {
            self->stopping_ = true;
            self->stop();
        }
    });
}

void io_object::finished() {
    if (finished_)
        return;
    finished_ = true;
    auto self = shared_from_this();
    socket_base_t *s = owner_;
    s->commands().post([s, self] { s->owned_gone(self.get()); });
}

}  // namespace zlink
