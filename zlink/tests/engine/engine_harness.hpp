// Test scaffolding for engine_t: a recording host, a handshake wrapper that
// adds a frame transform or a ZAP gate to NULL, a socketpair, and a loop
// that runs the io_context until a condition holds.  No session, no socket,
// no IO thread: the engine alone, driven from the test thread.
#pragma once
#include <sys/socket.h>
#include <unistd.h>

#include <asio/generic/stream_protocol.hpp>
#include <asio/io_context.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/msg.hpp"
#include "core/options.hpp"
#include "transport/engine.hpp"
#include "wire/frame.hpp"
#include "wire/null_handshake.hpp"

namespace engine_test {

using zlink::msg_t;
using socket_type = zlink::engine_t::socket_type;

// One frame as the host saw it.
struct frame {
    std::string body;
    bool more = false;
    bool operator==(const frame &) const = default;
};

inline msg_t make_msg(const std::string &body, bool more) {
    msg_t m;
    m.init_buffer(body.data(), body.size());
    if (more)
        m.set_flags(msg_t::more);
    return m;
}

// Records everything the engine tells its session; feeds it frames to send.
class recording_host final : public zlink::engine_host {
public:
    std::shared_ptr<zlink::engine_t> engine;
    std::optional<zlink::peer_info> ready;  // metadata span not kept
    std::optional<zlink::engine_end> ended;
    std::vector<frame> received;
    std::deque<msg_t> outbox;
    size_t capacity = SIZE_MAX;  // push_frame refuses beyond this many frames
    int flushes = 0;
    int deferred_flushes = 0;          // flush_frames(true): the wake-up may wait
    bool last_flush_deferred = false;  // the latest flush_frames() was (true)
    int pulls = 0;
    int returns = 0;
    int zap_requests = 0;
    std::optional<std::pair<int, int>> refused;  // handshake_refused(event, value)
    bool answer_zap_at_once = false;
    bool keep = false;  // also keep the received messages themselves
    std::vector<msg_t> kept;
    std::function<void()> on_pull;  // called before each frame is handed to the engine

    ~recording_host() override {
        for (auto &m : outbox)
            m.close();
        for (auto &m : kept)
            m.close();
    }
    void send(const std::string &body, bool more = false) {
        outbox.push_back(make_msg(body, more));
        if (engine)
            engine->restart_output();
    }
    void engine_ready(const zlink::peer_info &peer) override {
        ready = peer;
        ready->metadata = {};
    }
    bool push_frame(msg_t &m) override {
        if (received.size() >= capacity)
            return false;
        received.push_back(
            {std::string(static_cast<const char *>(m.data()), m.size()), m.has_more()});
        if (keep)
            kept.push_back(m);  // ownership moves to kept
        else
            m.close();
        m.init();
        return true;
    }
    void flush_frames(bool more_coming) override {
        ++flushes;
        if (more_coming)
            ++deferred_flushes;
        last_flush_deferred = more_coming;
    }
    bool pull_frame(msg_t &m) override {
        if (outbox.empty())
            return false;
        ++pulls;
        if (on_pull)
            on_pull();
        m = outbox.front();
        outbox.pop_front();
        return true;
    }
    void return_frame(msg_t &m) override {
        ++returns;
        outbox.push_front(m);
        m.init();
    }
    void zap_request(const zlink::wire::zap_request &) override {
        ++zap_requests;
        if (answer_zap_at_once)
            answer_zap();
    }
    void answer_zap() {
        zlink::wire::zap_reply r;
        r.status_code = "200";
        engine->zap_answer(r);
    }
    void handshake_refused(int event, int value) override { refused = {event, value}; }
    void engine_stopped(const zlink::engine_end &why) override { ended = why; }
};

// The test transform: MESSAGE command = name, flags octet (frame_flag bits:
// 1 = MORE, 4 = COMMAND), body XOR 0x5a.  Stands in for CURVE's box without any
// cryptography.
class xor_transform final : public zlink::wire::frame_transform {
public:
    int sealed = 0, opened = 0;
    zlink::wire::wire_error seal(std::uint8_t flags, std::span<const std::uint8_t> body,
                                 std::vector<std::uint8_t> &out) override {
        std::vector<std::uint8_t> cmd = {7, 'M', 'E', 'S', 'S', 'A', 'G', 'E', flags};
        for (auto b : body)
            cmd.push_back(b ^ 0x5a);
        std::uint8_t hdr[zlink::wire::max_header_size];
        size_t n = zlink::wire::write_frame_header(hdr, cmd.size(), false, true);
        out.insert(out.end(), hdr, hdr + n);
        out.insert(out.end(), cmd.begin(), cmd.end());
        ++sealed;
        return zlink::wire::wire_error::none;
    }
    zlink::wire::wire_error open(std::span<const std::uint8_t> command_body, std::uint8_t &flags,
                                 std::vector<std::uint8_t> &body) override {
        if (command_body.size() < 9 || command_body[0] != 7 || (command_body[8] & ~0x05) != 0)
            return zlink::wire::wire_error::malformed_command;
        flags = command_body[8];
        for (auto b : command_body.subspan(9))
            body.push_back(b ^ 0x5a);
        ++opened;
        return zlink::wire::wire_error::none;
    }
};

// NULL, plus optionally a frame transform after done() and/or a ZAP request
// that holds done() back until answered.
class test_handshake final : public zlink::wire::handshake {
public:
    test_handshake(const zlink::wire::handshake_options &o, bool transform, bool zap)
        : inner_(o), use_transform_(transform), zap_gate_(zap) {
        request_.mechanism = "NULL";
    }
    xor_transform transform_impl;

    std::span<const std::uint8_t> outgoing() const noexcept override { return inner_.outgoing(); }
    void consume_outgoing(std::size_t n) noexcept override { inner_.consume_outgoing(n); }
    std::size_t feed(std::span<const std::uint8_t> in) override {
        return zap_pending() ? 0 : inner_.feed(in);
    }
    bool done() const noexcept override { return inner_.done() && !zap_pending(); }
    bool failed() const noexcept override { return inner_.failed(); }
    zlink::wire::wire_error error() const noexcept override { return inner_.error(); }
    std::string_view error_detail() const noexcept override { return inner_.error_detail(); }
    zlink::wire::zmtp_version peer_version() const noexcept override {
        return inner_.peer_version();
    }
    zlink::wire::zmtp_version session_version() const noexcept override {
        return inner_.session_version();
    }
    zlink::wire::socket_type peer_socket_type() const noexcept override {
        return inner_.peer_socket_type();
    }
    bool peer_has_routing_id() const noexcept override { return inner_.peer_has_routing_id(); }
    std::span<const std::uint8_t> peer_routing_id() const noexcept override {
        return inner_.peer_routing_id();
    }
    std::span<const std::uint8_t> peer_metadata() const noexcept override {
        return inner_.peer_metadata();
    }
    const char *mechanism() const noexcept override { return "NULL"; }
    const zlink::wire::zap_request *zap_pending() const noexcept override {
        return zap_gate_ && inner_.done() && !answered_ ? &request_ : nullptr;
    }
    void zap_answer(const zlink::wire::zap_reply &) override { answered_ = true; }
    zlink::wire::frame_transform *transform() noexcept override {
        return use_transform_ ? &transform_impl : nullptr;
    }

private:
    zlink::wire::null_handshake inner_;
    bool use_transform_;
    bool zap_gate_;
    bool answered_ = false;
    zlink::wire::zap_request request_;
};

inline zlink::options_t options_for(int type) {
    zlink::options_t o;
    o.type = type;
    return o;
}

inline std::unique_ptr<zlink::wire::handshake> null_for(const zlink::options_t &o) {
    zlink::wire::handshake_options ho;
    ho.self = static_cast<zlink::wire::socket_type>(o.type);
    ho.routing_id = {reinterpret_cast<const std::uint8_t *>(o.routing_id.data()),
                     o.routing_id.size()};
    return std::make_unique<zlink::wire::null_handshake>(ho);
}

// Two connected Unix stream sockets: fds[0], fds[1].
inline void socket_pair(int fds[2]) {
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
        fds[0] = fds[1] = -1;
}

inline socket_type adopt(asio::io_context &ioc, int fd) {
    socket_type s(ioc);
    asio::error_code ec;
    s.assign(asio::generic::stream_protocol(AF_UNIX, 0), fd, ec);
    s.non_blocking(true, ec);
    return s;
}

// Runs handlers until pred() holds or timeout passes; returns pred().
inline bool run_until(asio::io_context &ioc, const std::function<bool()> &pred,
                      std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!pred() && std::chrono::steady_clock::now() < deadline) {
        ioc.restart();
        ioc.run_one_for(std::chrono::milliseconds(10));
    }
    return pred();
}

}  // namespace engine_test
