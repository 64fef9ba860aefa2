// forwarder: an executor whose target thread is not known yet.
// Used for inproc connect-before-bind: the binder's pipe end exists before
// the binder does, so its commands queue here until bind (or until the
// connecter gives up, when the reaper thread runs them).
#pragma once
#include <mutex>
#include <utility>
#include <vector>

#include "core/executor.hpp"

namespace zlink {

class forwarder final : public executor {
public:
    void post(command c) override {
        std::lock_guard<std::mutex> lock(mutex_);
        if (target_)
            target_->post(std::move(c));
        else
            queued_.push_back(std::move(c));
    }
    void set_target(executor *t) {
        std::lock_guard<std::mutex> lock(mutex_);
        target_ = t;
        for (auto &c : queued_)
            target_->post(std::move(c));
        queued_.clear();
    }

private:
    std::mutex mutex_;
    executor *target_ = nullptr;
    std::vector<command> queued_;
};

}  // namespace zlink
