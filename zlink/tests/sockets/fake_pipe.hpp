// A fake pipe and message honouring the contracts documented in
// src/sockets/policy/*.hpp, so the routing policies are tested without threads.
#pragma once

#include <cstddef>
#include <deque>
#include <string>

namespace zlink::testing {

struct fake_msg {
    std::string body;
    bool more_flag = false;
    bool has_more() const { return more_flag; }
    int init() {
        *this = fake_msg{};
        return 0;
    }
    int copy(fake_msg &src) {
        *this = src;
        return 0;
    }
};

// HWM counts whole messages, like CORE's pipe: the first frame of a message is
// refused when `hwm` complete-or-started messages are queued; later frames of
// a started message are always accepted.
struct fake_pipe {
    explicit fake_pipe(std::size_t hwm_ = 0) : hwm(hwm_) {}

    std::size_t hwm;              // 0 = unlimited
    std::deque<fake_msg> frames;  // written (flushed or not)
    std::size_t messages = 0;     // messages started
    std::size_t flushed_frames = 0;
    bool in_message = false;
    bool closed = false;

    bool write(fake_msg &m) {
        if (closed)
            return false;
        if (!in_message && hwm != 0 && messages >= hwm)
            return false;
        if (!in_message)
            ++messages;
        in_message = m.has_more();
        frames.push_back(m);
        m.body.clear();  // consumed
        return true;
    }
    bool check_write() const { return !closed && (in_message || hwm == 0 || messages < hwm); }
    void flush() { flushed_frames = frames.size(); }
    void rollback() {
        while (frames.size() > flushed_frames)
            frames.pop_back();
        in_message = false;
    }

    // Reading side: only flushed frames are visible (messages arrive whole).
    bool read(fake_msg &m) {
        if (flushed_frames == 0)
            return false;
        m = frames.front();
        frames.pop_front();
        --flushed_frames;
        if (!m.has_more())
            --messages;
        return true;
    }
    bool check_read() const { return flushed_frames > 0; }

    // Test helpers.
    void push(std::string body, bool more = false) {
        fake_msg m{std::move(body), more};
        write(m);
        if (!more)
            flush();
    }
    std::string pop_body() {
        fake_msg m;
        return read(m) ? m.body : std::string("<empty>");
    }
};

inline fake_msg frame(std::string body, bool more = false) { return {std::move(body), more}; }

}  // namespace zlink::testing
