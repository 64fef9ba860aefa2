#include "transport/engine_input.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <asio/post.hpp>
#include <cerrno>
#include <cstring>

#include "transport/engine.hpp"
#include "wire/command.hpp"
#include "wire/error.hpp"
#include "zmq.h"

namespace zlink {

namespace {
// Bodies at least this large that are still missing after the buffered bytes
// are read by the kernel directly into the message.
constexpr std::size_t in_place_threshold = 1024;

uint64_t max_body(const options_t &o) {
    return o.maxmsgsize >= 0 ? static_cast<uint64_t>(o.maxmsgsize) : wire::frame_decoder::unlimited;
}

std::span<const uint8_t> bytes_of(const msg_t &m) {
    return {static_cast<const uint8_t *>(m.data()), m.size()};
}
}  // namespace

engine_input::engine_input(engine_t &engine, const options_t &opts)
    : e_(engine), dec_(max_body(opts)),
      in_size_(engine_t::batch_bytes(opts.batch.in), engine_t::batch_bytes(opts.batch.in_ceiling)) {
    in_msg_.init();
}

engine_input::~engine_input() { in_msg_.close(); }

void engine_input::restart() {
    if (!blocked_ || e_.stopped())
        return;
    blocked_ = false;
    if (e_.raw_)
        return process_raw_input();
    process_input();
}

void engine_input::start_read() {
    if (read_ == read_state::owed || read_ == read_state::looping_owed || blocked_ || e_.stopped())
        return;
    if (read_ == read_state::looping) {
        read_ = read_state::looping_owed;
        return;
    }
    read_ = read_state::owed;
    asio::post(e_.sock_.get_executor(),
               [self = e_.shared_from_this()] { self->input_.read_loop(); });
}

// Entered with a read owed.  Reads until the socket is empty (then waits for
// readability), the input stops asking for more (blocked, stopped) or
// reads_per_turn reads ran (1 in the handshake): then the rest of the turn is
// posted, so one busy connection cannot starve the others of this IO thread,
// nor its command mailbox.
void engine_input::read_loop() {
    auto self = e_.shared_from_this();
    read_ = read_state::looping_owed;
    for (int turn = 0;; ++turn) {
        if (e_.stopped())
            break;
        // Before the handshake is done, one read per turn: connections then
        // complete their handshakes in the order their bytes arrived, as when
        // every read was its own Asio operation (libzmq's test_spec_req
        // round-robins over peers in the order they connected; looping let a
        // connection whose bytes were all there finish ahead of the others).
        if (turn == (e_.ready() ? reads_per_turn : 1)) {
            asio::post(e_.sock_.get_executor(), [self] { self->input_.read_loop(); });
            break;
        }
        auto buf = next_read_buffer();
        if (!buf.data()) {
            read_ = read_state::looping;
            e_.fail("out of memory", 0);
            break;
        }
        const ssize_t n = ::recv(e_.sock_.native_handle(), buf.data(), buf.size(), MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            body_in_place_ = false;  // the next turn chooses its buffer again
            wait_readable();
            break;
        }
        if (n < 0)
            on_read(asio::error_code(errno, asio::system_category()), 0);
        else if (n == 0)
            on_read(asio::error::eof, 0);
        else
            on_read({}, static_cast<std::size_t>(n));
        if (read_ != read_state::looping_owed)
            break;  // blocked, stopped, or a read is owed elsewhere
    }
    // A read still owed is now posted or waits for readability.
    read_ = read_ == read_state::looping_owed ? read_state::owed : read_state::idle;
    // Whatever the loop published without waking the socket, it wakes it now.
    if (wake_deferred_ && !e_.stopped())
        e_.host_->flush_frames(false);
    wake_deferred_ = false;
}

void engine_input::wait_readable() {
    e_.sock_.async_wait(asio::socket_base::wait_read,
                        [self = e_.shared_from_this()](const asio::error_code &ec) {
                            if (ec)
                                return self->input_.on_read(ec, 0);  // no read owed now; reports
                            if (!self->stopped())
                                self->input_.read_loop();
                        });
}

// The next read goes straight into the body being decoded: a large body
// whose rest is not buffered.
bool engine_input::next_read_in_place() const {
    return e_.ready() && !e_.raw_ && chunk_.pending() == 0 &&
           dec_.body_remaining().size() >= in_place_threshold;
}

// Where the next read goes: straight into the body of a large message being
// decoded (zero copy: the kernel writes into it), else the receive chunk.
// Null when a fresh chunk could not be allocated.
asio::mutable_buffer engine_input::next_read_buffer() {
    if (next_read_in_place()) {
        auto rem = dec_.body_remaining();
        body_in_place_ = true;
        asked_ = rem.size();
        return asio::buffer(rem.data(), rem.size());
    }
    const std::size_t batch = in_size_.now();
    if (!chunk_.prepare(batch))
        return {};
    read_room_ = chunk_.room(batch);
    asked_ = read_room_;
    return asio::buffer(chunk_.read_target(), read_room_);
}

void engine_input::on_read(const asio::error_code &ec, std::size_t n) {
    read_ = read_ == read_state::looping_owed ? read_state::looping : read_state::idle;
    if (e_.stopped())
        return;
    if (ec)
        return e_.fail_read(ec);
    e_.note_receive();
    last_read_full_ = n == asked_;
    last_read_in_place_ = body_in_place_;
    if (e_.held()) {
        chunk_.discard();
        return start_read();
    }
    if (body_in_place_) {
        body_in_place_ = false;
        if (dec_.body_filled(n) == wire::frame_decoder::step::frame)
            frame_complete();
    } else {
        chunk_.filled(n);
        read_bytes_ = n;
    }
    if (e_.raw_)
        return process_raw_input();
    if (!e_.ready())
        return e_.advance_handshake();
    process_input();
}

void engine_input::process_raw_input() {
    if (held_ == held_frame::none) {
        in_msg_.close();
        auto bytes = chunk_.buffered();
        if (in_msg_.init_buffer(bytes.data(), bytes.size()) != 0)
            return e_.fail("out of memory", 0);
        chunk_.discard();
        held_ = held_frame::message;
    }
    const bool taken = e_.host_->push_frame(in_msg_);
    if (taken)
        held_ = held_frame::none;
    else
        blocked_ = true;
    e_.host_->flush_frames(false);
    start_read();
}

void engine_input::process_input() {
    const std::size_t frames_before = frames_in_;
    decode_frames();
    if (e_.stopped())
        return;
    if (read_bytes_) {  // after a chunk read: size the next one
        in_size_.observe(read_bytes_, frames_in_ - frames_before, read_bytes_ == read_room_);
        read_bytes_ = 0;
    }
    // One flush for the whole read (also when blocked).  Inside the read loop,
    // after a full read while a large message is in flight, the wake-up waits
    // for the loop's end or a short read (see the header).
    const bool large_in_flight = last_read_in_place_ || next_read_in_place();
    const bool more_coming =
        read_ == read_state::looping && last_read_full_ && large_in_flight && !blocked_;
    e_.host_->flush_frames(more_coming);
    wake_deferred_ = wake_deferred_ || more_coming;
    start_read();
}

// Returns false when it had to stop (host full, or the connection failed).
bool engine_input::decode_frames() {
    using step = wire::frame_decoder::step;
    for (;;) {
        if (held_ != held_frame::none && !deliver_frame())
            return false;
        if (e_.stopped())
            return false;
        std::size_t used = 0;
        step s = dec_.decode(chunk_.buffered(), used);
        chunk_.consume(used);
        switch (s) {
        case step::header:
            if (!begin_body())
                return false;
            break;
        case step::frame: frame_complete(); break;
        case step::error:
            e_.fail(wire::to_string(dec_.error()), ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL);
            return false;
        case step::need_more: return true;
        }
    }
}

// A body already complete in the chunk and too big to be inline becomes a
// window into the chunk; any other body gets its own storage (the decoder
// copies what is buffered; a large rest is then read straight into it).
bool engine_input::begin_body() {
    const std::size_t size = static_cast<std::size_t>(dec_.header().size);
    in_msg_.close();
    if (size > msg_t::max_inline && size <= chunk_.pending()) {
        if (chunk_.cut_window(in_msg_, size) == 0) {
            dec_.skip_body();
            return true;
        }
    } else if (in_msg_.init_size(size) == 0) {
        dec_.set_body({static_cast<uint8_t *>(in_msg_.data()), size});
        return true;
    }
    e_.fail("out of memory", 0);
    return false;
}

void engine_input::frame_complete() {
    ++frames_in_;
    if (e_.tf_)
        return open_frame();
    const auto &h = dec_.header();
    held_ = h.command() ? held_frame::command : held_frame::message;
    if (h.more())
        in_msg_.set_flags(msg_t::more);
}

// With a frame transform every received frame is a protected one (CURVE: a
// MESSAGE command); a frame in clear is refused, never delivered.  The
// plaintext's flags say whether it is a message part or a command.
//
// The frame is opened where it was received (its own block, or a window into
// the receive chunk), and the message is a window onto the plaintext there: a
// 256 KiB message costs no second block and no copy after the decryption
// (copying it out, as before, took three passes over the body and a block per
// message: docs/profiling/2026-12-03-curve-large.md).  A short plaintext is
// copied into the message instead, so it does not keep a block alive.
void engine_input::open_frame() {
    std::uint8_t flags = 0;
    std::span<std::uint8_t> plain;
    const auto e = e_.tf_->open_in_place({static_cast<uint8_t *>(in_msg_.data()), in_msg_.size()},
                                         flags, plain);
    if (e != wire::wire_error::none) {
        const auto f = wire::classify_failure(e, {});
        return e_.fail(wire::to_string(e), ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                       static_cast<int>(f.value));
    }
    msg_t m;
    const bool window =
        plain.size() > msg_t::max_inline && m.init_window(in_msg_, plain.data(), plain.size()) == 0;
    if (!window && m.init_buffer(plain.data(), plain.size()) != 0)
        return e_.fail("out of memory", 0);
    if (flags & wire::frame_flag::more)
        m.set_flags(msg_t::more);
    in_msg_.move(m);
    held_ = (flags & wire::frame_flag::command) ? held_frame::command : held_frame::message;
}

// Hands the held frame to the host (commands are handled here first).
bool engine_input::deliver_frame() {
    if (held_ == held_frame::command) {
        held_ = held_frame::message;  // unless handle_command consumes it
        if (!handle_command())
            return false;
        if (held_ == held_frame::none)
            return true;  // consumed here
    }
    if (!e_.host_->push_frame(in_msg_)) {
        blocked_ = true;  // resume on restart()
        return false;
    }
    held_ = held_frame::none;
    return true;
}

// Returns false when the connection failed.  Leaves a message held when the
// command became one for the host (SUBSCRIBE/CANCEL in message form).
bool engine_input::handle_command() {
    wire::command_view cv;
    auto body = bytes_of(in_msg_);
    if (wire::parse_command(body, cv) != wire::wire_error::none) {
        e_.fail("malformed command", ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL);
        return false;
    }
    switch (cv.kind) {
    case wire::command_kind::subscribe:
    case wire::command_kind::cancel: {
        // To the socket in message form: \x01/\x00 + topic.
        msg_t m;
        if (m.init_size(cv.data.size() + 1) != 0) {
            e_.fail("out of memory", 0);
            return false;
        }
        auto *p = static_cast<uint8_t *>(m.data());
        p[0] = cv.kind == wire::command_kind::subscribe ? 1 : 0;
        if (!cv.data.empty())
            std::memcpy(p + 1, cv.data.data(), cv.data.size());
        in_msg_.move(m);
        return true;
    }
    case wire::command_kind::ping: e_.on_ping(cv.data); break;
    case wire::command_kind::error:
        e_.fail("peer sent ERROR", ZMQ_EVENT_DISCONNECTED);
        return false;
    default: break;  // PONG and unknown commands: nothing to do
    }
    in_msg_.close();
    in_msg_.init();
    held_ = held_frame::none;
    return true;
}

}  // namespace zlink
