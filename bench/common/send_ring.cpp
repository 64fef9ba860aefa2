#include "send_ring.hpp"

namespace bench {

SendRing::SendRing(std::size_t buffers, std::size_t size) {
    slots_.reserve(buffers);
    for (std::size_t i = 0; i < buffers; ++i) {
        slots_.push_back(std::make_unique<Slot>());
        // Written once here, so no buffer is first touched inside a timed window.
        slots_.back()->bytes.assign(size == 0 ? 1 : size, 0);
    }
}

SendRing::Slot &SendRing::next() {
    Slot &s = *slots_[next_];
    next_ = (next_ + 1) % slots_.size();
    if (s.in_flight.load(std::memory_order_acquire)) {
        ++waits_;
        while (s.in_flight.load(std::memory_order_acquire))
            s.in_flight.wait(true, std::memory_order_acquire);
    }
    s.in_flight.store(true, std::memory_order_relaxed);
    return s;
}

SendRing &SendRing::make_for_process(std::size_t buffers, std::size_t size) {
    // Reachable from a static until exit (never destroyed, not even by exit()'s static
    // destructors, which may run while a library thread still frees a message).
    static auto *mutex = new std::mutex;
    static auto *rings = new std::vector<std::unique_ptr<SendRing>>;
    std::lock_guard lock(*mutex);
    rings->push_back(std::make_unique<SendRing>(buffers, size));
    return *rings->back();
}

void SendRing::release(void *, void *hint) {
    auto *s = static_cast<Slot *>(hint);
    s->in_flight.store(false, std::memory_order_release);
    s->in_flight.notify_one();
}

}  // namespace bench
