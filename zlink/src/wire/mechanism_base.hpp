// What every handshake shares: the greeting with our mechanism name and
// as-server flag, the decoding of the peer's handshake commands, the output
// buffer, the peer's properties (Socket-Type check, Identity) and the ZAP
// request/answer cycle. NULL, PLAIN and CURVE (client and server) derive from it
// and only say what to send and how to read each command.
//
// Output: outgoing() holds our greeting from construction on, released in the
// steps of greeting_release() as the peer's greeting arrives (signature, then
// version-major, then the rest); commands queued after it wait for the rest.
//
// Flow inside feed(): greeting bytes -> greeting_parser; once accepted,
// on_greeting(); then every complete command frame -> on_command(). Derived
// classes call send_command() to queue replies, ask_zap() to wait for the ZAP
// handler (feed() then consumes nothing until zap_answer()), finish() when the
// handshake is complete and fail() when it is not going to be.
//
// Memory: the output buffer, one command body at a time (bounded by
// max_handshake_command) and a copy of the peer's properties.
#pragma once

#include "wire/command.hpp"
#include "wire/error.hpp"
#include "wire/frame_decoder.hpp"
#include "wire/greeting.hpp"
#include "wire/handshake.hpp"
#include "wire/socket_type.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zlink::wire {

class mechanism_base : public handshake {
public:
    std::span<const std::uint8_t> outgoing() const noexcept override;
    void consume_outgoing(std::size_t n) noexcept override;
    std::size_t feed(std::span<const std::uint8_t> in) override;

    bool done() const noexcept override { return done_; }
    bool failed() const noexcept override { return error_ != wire_error::none; }
    wire_error error() const noexcept override { return error_; }
    std::string_view error_detail() const noexcept override { return detail_; }

    zmtp_version peer_version() const noexcept override { return greeting_.peer_version(); }
    zmtp_version session_version() const noexcept override;
    socket_type peer_socket_type() const noexcept override { return peer_type_; }
    bool peer_has_routing_id() const noexcept override { return peer_has_id_; }
    std::span<const std::uint8_t> peer_routing_id() const noexcept override;
    std::span<const std::uint8_t> peer_metadata() const noexcept override;

    const zap_request *zap_pending() const noexcept override;
    void zap_answer(const zap_reply &reply) override;
    std::string_view user_id() const noexcept override { return user_id_; }

protected:
    // `mechanism` must be a literal ("PLAIN", "CURVE"): the greeting parser keeps it.
    mechanism_base(const handshake_options &opts, const char *mechanism, bool as_server);

    // The peer's greeting was accepted; a client queues its HELLO here.
    virtual void on_greeting() {}
    // One complete command frame from the peer (name parsed, not interpreted).
    virtual void on_command(const command_view &cmd) = 0;
    // ZAP said 200 (user_id() is set). Only called after ask_zap().
    virtual void on_zap_accepted() {}
    // Nothing is bound at inproc://zeromq.zap.01. Default: fail(no_zap_handler).
    virtual void on_zap_missing();
    // A command body that does not parse: a mechanism may still recognise it (PLAIN:
    // libzmq's ERROR form) and return true after handling it. Default: false.
    virtual bool on_unparsed_command(std::span<const std::uint8_t>) { return false; }
    // Queues the ERROR that refuses the client with a ZAP status code.
    virtual void send_refusal(std::string_view status_code) { send_error(status_code); }

    const handshake_options &options() const noexcept { return opts_; }
    // The whole command body (name-size octet, name, data) that `cmd` views: the
    // RFCs give command layouts as offsets into it.
    static std::span<const std::uint8_t> body_of(const command_view &cmd) noexcept;

    // Frames `body` (name included) as a command and appends it to outgoing().
    void send_command(std::span<const std::uint8_t> body);
    void send_error(std::string_view reason);
    void fail(wire_error e, std::string_view detail = {});
    void finish() noexcept { done_ = true; }

    // Our Socket-Type, Identity (for REQ/DEALER/ROUTER) and extra properties, in
    // property encoding, for INITIATE/READY.
    std::span<const std::uint8_t> our_properties() const noexcept { return our_props_; }
    // Validates the peer's properties, checks Socket-Type against ours (queues an
    // ERROR on a mismatch), keeps a copy and its Identity. Returns false after fail().
    bool accept_properties(std::span<const std::uint8_t> props);
    // A client's handling of the server's ERROR: a ZAP status code ("300", "400",
    // "500") fails with auth_failed, any other reason with peer_sent_error.
    void on_error_command(const command_view &cmd);
    void on_error_reason(std::string_view reason);
    // Publishes a ZAP request; the handshake waits for zap_answer().
    void ask_zap(std::string_view mechanism, std::vector<std::vector<std::uint8_t>> credentials);

private:
    std::size_t releasable() const noexcept;
    std::size_t feed_commands(std::span<const std::uint8_t> in);
    bool waiting() const noexcept { return done_ || failed() || zap_waiting_; }
    void build_our_properties();

    handshake_options opts_;
    std::vector<std::uint8_t> routing_id_;
    std::vector<std::uint8_t> extra_bytes_;
    std::vector<property_view> extra_;
    std::vector<std::uint8_t> our_props_;
    std::vector<std::uint8_t> out_;
    std::size_t out_sent_ = 0;
    greeting_parser greeting_;
    frame_decoder decoder_;
    std::vector<std::uint8_t> command_;
    std::vector<std::uint8_t> peer_props_;
    std::size_t id_offset_ = 0, id_size_ = 0;
    socket_type peer_type_ = socket_type::pair;
    bool peer_has_id_ = false;
    zap_request zap_;
    bool zap_waiting_ = false;
    std::string user_id_;
    bool done_ = false;
    wire_error error_ = wire_error::none;
    std::string detail_;
};

}  // namespace zlink::wire
