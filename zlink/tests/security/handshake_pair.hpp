// Runs two wire::handshake objects against each other in memory, the way two
// engines would over a socket: each side's outgoing() octets go to the other's
// feed(), in chunks of a chosen size, until nothing moves. A failed side still
// gets its outgoing() (the ERROR command) delivered, then stops being fed. ZAP
// requests are answered by a callback, or left pending when there is none.
#pragma once

#include "wire/handshake.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

namespace zlink::wire::test {

using zap_handler = std::function<std::optional<zap_reply>(const zap_request &)>;

class handshake_pair {
public:
    handshake_pair(handshake &client, handshake &server) : sides_{&client, &server} {}

    // Octets delivered per feed() call (1 exercises every split point).
    std::size_t chunk = std::numeric_limits<std::size_t>::max();
    zap_handler zap;                 // answers the server's (or any side's) ZAP requests
    std::vector<zap_request> asked;  // every request answered, in order

    void run() {
        for (int guard = 0; guard < 100000; ++guard)
            if (!step())
                return;
    }

    // Octets one side wrote that the other has not consumed (0 = client's).
    const std::vector<std::uint8_t> &inbox(int side) const { return inbox_[side]; }
    std::vector<std::uint8_t> &inbox(int side) { return inbox_[side]; }

private:
    bool step() {
        bool moved = false;
        for (int i = 0; i < 2; ++i) {
            handshake &from = *sides_[i];
            const auto out = from.outgoing();
            if (!out.empty()) {
                inbox_[1 - i].insert(inbox_[1 - i].end(), out.begin(), out.end());
                from.consume_outgoing(out.size());
                moved = true;
            }
        }
        for (int i = 0; i < 2; ++i)
            moved |= feed(i);
        return moved;
    }

    bool feed(int i) {
        handshake &hs = *sides_[i];
        bool moved = answer_zap(hs);
        auto &in = inbox_[i];
        while (!in.empty() && !hs.done() && !hs.failed() && !hs.zap_pending()) {
            const std::size_t n = std::min(chunk, in.size());
            const std::size_t used = hs.feed(std::span(in).first(n));
            in.erase(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(used));
            moved |= used > 0;
            moved |= answer_zap(hs);
            if (used == 0)
                break;
        }
        return moved;
    }

    bool answer_zap(handshake &hs) {
        const zap_request *r = hs.zap_pending();
        if (!r || !zap)
            return false;
        const auto reply = zap(*r);
        if (!reply)
            return false;
        asked.push_back(*r);
        hs.zap_answer(*reply);
        return true;
    }

    handshake *sides_[2];
    std::vector<std::uint8_t> inbox_[2];
};

inline zap_reply zap_status(const char *code, const char *user = "") {
    zap_reply r;
    r.status_code = code;
    r.status_text = code[0] == '2' ? "OK" : "refused";
    r.user_id = user;
    return r;
}

inline zap_reply zap_missing() {
    zap_reply r;
    r.handler_missing = true;
    return r;
}

}  // namespace zlink::wire::test
