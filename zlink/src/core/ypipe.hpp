// ypipe<T>: lock-free single-producer/single-consumer queue with a
// "reader asleep" handshake, after libzmq's ypipe idea (own implementation).
//
// Why: sockets and sessions exchange every message through one of these, so
// the hot path must be a store plus (per flush) one CAS, with no lock and no
// allocation (items live in fixed chunks; one spare chunk is recycled).
// The handshake lets the writer learn, at flush time, that the reader found
// the queue empty and went to sleep, so exactly one wake-up is sent per
// sleep instead of one per message (coalesced wake-ups).
//
// Counters are monotonic item indexes.  `published_` holds the index up to
// which items are visible, or `asleep` when the reader drained everything and
// asked to be woken.
#pragma once
#include <atomic>
#include <cstdint>
#include <utility>

namespace zlink {

template <typename T, int N = 256>
class ypipe {
public:
    ypipe() { head_ = tail_ = new chunk; }
    ~ypipe() {
        // Destroy whatever was written but never read (published or not).
        T item;
        while (r_ < w_) {
            pop_one(item);
            item.close();
        }
        while (head_) {
            chunk *n = head_->next;
            delete head_;
            head_ = n;
        }
        delete spare_.load();
    }
    ypipe(const ypipe &) = delete;
    ypipe &operator=(const ypipe &) = delete;

    // ---- writer side ----
    // Stages an item; it becomes visible at the next flush() after a write
    // with incomplete == false (so multipart messages appear atomically).
    void write(const T &item, bool incomplete) {
        tail_->items[wpos_] = item;
        if (++wpos_ == N) {
            chunk *c = tail_->next;  // non-null only after an unwrite stepped back
            if (!c) {
                c = spare_.exchange(nullptr, std::memory_order_acquire);
                if (!c)
                    c = new chunk;
                c->next = nullptr;
                c->prev = tail_;
                tail_->next = c;
            }
            tail_ = c;
            wpos_ = 0;
        }
        ++w_;
        if (!incomplete)
            complete_ = w_;
    }
    // Removes the last staged item if it belongs to an incomplete message.
    bool unwrite(T &item) {
        if (w_ == complete_)
            return false;
        if (wpos_ == 0) {
            tail_ = tail_->prev;  // step back into the previous chunk
            wpos_ = N;
        }
        --wpos_;
        --w_;
        item = tail_->items[wpos_];
        return true;
    }
    // Publishes complete items.  Returns false when the reader was asleep:
    // the caller must then wake it (once).
    bool flush() {
        if (complete_ == flushed_)
            return true;
        uint64_t expected = flushed_;
        if (published_.compare_exchange_strong(expected, complete_, std::memory_order_acq_rel)) {
            flushed_ = complete_;
            return true;
        }
        // Reader is asleep (published_ == asleep): publish and ask for a wake-up.
        published_.store(complete_, std::memory_order_release);
        flushed_ = complete_;
        return false;
    }

    // Writer-side probe: nothing staged or unread, and the reader marked itself
    // asleep after taking everything (so it reads nothing until the next flush).
    bool drained() const { return w_ == flushed_ && drained_before_staged(); }
    // The same, except for staged items of an incomplete message (not yet flushed).
    bool drained_before_staged() const {
        return complete_ == flushed_ && published_.load(std::memory_order_acquire) == asleep;
    }
    // Items of the incomplete message staged so far.
    uint64_t staged() const { return w_ - complete_; }

    // ---- reader side ----
    // True if an item is readable.  When the queue is empty the reader is
    // marked asleep, so the next flush() reports that a wake-up is due.
    bool check_read() {
        if (r_ < limit_)
            return true;
        uint64_t seen = r_;
        if (published_.compare_exchange_strong(seen, asleep, std::memory_order_acq_rel))
            return false;  // nothing new: now asleep
        if (seen == asleep)
            return false;  // already asleep
        limit_ = seen;
        return r_ < limit_;
    }
    bool read(T &item) {
        if (!check_read())
            return false;
        pop_one(item);
        return true;
    }
    // Front item; valid only right after check_read() returned true.
    const T &front() const { return head_->items[rpos_]; }
    // Reader-side probe that never marks the reader asleep.
    bool probe() const {
        if (r_ < limit_)
            return true;
        uint64_t p = published_.load(std::memory_order_acquire);
        return p != asleep && p > r_;
    }

private:
    static constexpr uint64_t asleep = ~uint64_t(0);
    struct chunk {
        T items[N];
        chunk *next = nullptr;
        chunk *prev = nullptr;  // writer-only, for unwrite across a boundary
    };

    void pop_one(T &item) {
        item = head_->items[rpos_];
        ++r_;
        if (++rpos_ == N) {
            chunk *old = head_;
            head_ = head_->next;
            rpos_ = 0;
            // Keep one chunk for the writer to reuse; free any older spare.
            delete spare_.exchange(old, std::memory_order_release);
        }
    }

    // writer-owned
    chunk *tail_;
    int wpos_ = 0;
    uint64_t w_ = 0, complete_ = 0, flushed_ = 0;
    // shared
    alignas(64) std::atomic<uint64_t> published_{0};
    std::atomic<chunk *> spare_{nullptr};
    // reader-owned
    alignas(64) chunk *head_;
    int rpos_ = 0;
    uint64_t r_ = 0, limit_ = 0;
};

}  // namespace zlink
