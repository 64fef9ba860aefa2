#include "core/io_object.hpp"

#include <utility>

#include "core/io_thread.hpp"
#include "core/socket_base.hpp"

namespace zlink {

io_object::io_object(io_thread *thread, socket_base_t *owner) : thread_(thread), owner_(owner) {
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
    thread_->post(command{command_kind::io_start, nullptr, nullptr, shared_from_this()});
}

void io_object::request_stop(int linger) {
    const auto encoded = static_cast<std::uint64_t>(linger - keep_linger);  // keep_linger -> 0
    thread_->post(command{command_kind::io_stop, nullptr, nullptr, shared_from_this(), encoded});
}

void io_object::process(const command &c) {
    if (c.kind == command_kind::io_start) {
        if (!stopping_)
            start();
    } else if (c.kind == command_kind::io_stop && !stopping_) {
        stopping_ = true;
        requested_linger_ = static_cast<int>(c.value) + keep_linger;
        stop();
    }
}

void io_object::send_to_owner(command c) {
    c.socket = owner_;
    owner_->commands().post(std::move(c));
}

void io_object::finished() {
    if (finished_)
        return;
    finished_ = true;
    send_to_owner(command{command_kind::owned_gone, nullptr, nullptr, shared_from_this()});
}

}  // namespace zlink
