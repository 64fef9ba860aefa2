#include "link.hpp"

#include <chrono>
#include <cstring>

namespace bench {

namespace {

constexpr const char *kNames[] = {"hello", "hello_ok", "b_got_sync", "a_got_sync", "go",
                                  "sent",  "thr_done", "finished",   "slice"};
static_assert(sizeof kNames / sizeof kNames[0] == static_cast<int>(Signal::count_));

int index(Signal s) { return static_cast<int>(s); }

// One side's end of an in-process link: posts into the peer's mailbox.
class ThreadLink final : public Link {
public:
    ThreadLink(std::shared_ptr<Mailbox> mine, std::shared_ptr<Mailbox> peer)
        : mine_(std::move(mine)), peer_(std::move(peer)) {}
    void post(Signal s, const std::string &payload) override { peer_->put(s, payload); }

protected:
    Mailbox &inbox() override { return *mine_; }

private:
    std::shared_ptr<Mailbox> mine_, peer_;
};

}  // namespace

const char *to_string(Signal s) { return kNames[index(s)]; }

bool signal_from_string(const std::string &name, Signal &out) {
    for (int i = 0; i < index(Signal::count_); ++i)
        if (name == kNames[i]) {
            out = static_cast<Signal>(i);
            return true;
        }
    return false;
}

void Mailbox::put(Signal s, std::string payload) {
    {
        std::lock_guard lock(m_);
        slots_[index(s)] = std::move(payload);
    }
    cv_.notify_all();
}

std::string Mailbox::take(Signal s) {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return slots_[index(s)].has_value(); });
    std::string v = std::move(*slots_[index(s)]);
    slots_[index(s)].reset();
    return v;
}

std::optional<std::string> Mailbox::try_take(Signal s, int wait_ms) {
    std::unique_lock lock(m_);
    if (!cv_.wait_for(lock, std::chrono::milliseconds(wait_ms),
                      [&] { return slots_[index(s)].has_value(); }))
        return std::nullopt;
    std::optional<std::string> v = std::move(slots_[index(s)]);
    slots_[index(s)].reset();
    return v;
}

ThreadLinks make_thread_links() {
    auto to_sender = std::make_shared<Mailbox>();
    auto to_receiver = std::make_shared<Mailbox>();
    return ThreadLinks{std::make_unique<ThreadLink>(to_sender, to_receiver),
                       std::make_unique<ThreadLink>(to_receiver, to_sender)};
}

}  // namespace bench
