// Command body codec (RFC 37 "Commands", "The NULL Security Mechanism",
// "Connection Heartbeating", "The Publish-Subscribe Pattern").
#include "wire/command.hpp"

#include "wire/frame.hpp"

#include <array>
#include <cstring>

namespace zlink::wire {

namespace {

constexpr bool is_alpha(std::uint8_t c) noexcept {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

// RFC 37 name-char = ALPHA | DIGIT | "-" | "_" | "." | "+"
constexpr bool is_name_char(std::uint8_t c) noexcept {
    return is_alpha(c) || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '+';
}

constexpr std::uint32_t read_u32(const std::uint8_t *p) noexcept {
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
           std::uint32_t{p[3]};
}

std::string_view as_chars(std::span<const std::uint8_t> s) noexcept {
    return {reinterpret_cast<const char *>(s.data()), s.size()};
}

bool iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; };
        if (lower(a[i]) != lower(b[i]))
            return false;
    }
    return true;
}

command_kind kind_of(std::string_view name) noexcept {
    // Command names are matched exactly: the RFC gives them in upper case and
    // libzmq compares case-sensitively.
    if (name == "READY")
        return command_kind::ready;
    if (name == "ERROR")
        return command_kind::error;
    if (name == "SUBSCRIBE")
        return command_kind::subscribe;
    if (name == "CANCEL")
        return command_kind::cancel;
    if (name == "PING")
        return command_kind::ping;
    if (name == "PONG")
        return command_kind::pong;
    return command_kind::other;
}

// Appends one property; `p` must have property_size() octets of room.
std::uint8_t *put_property(std::uint8_t *p, std::string_view name,
                           std::span<const std::uint8_t> value) noexcept {
    *p++ = static_cast<std::uint8_t>(name.size());
    std::memcpy(p, name.data(), name.size());
    p += name.size();
    const auto n = static_cast<std::uint32_t>(value.size());
    *p++ = static_cast<std::uint8_t>(n >> 24);
    *p++ = static_cast<std::uint8_t>(n >> 16);
    *p++ = static_cast<std::uint8_t>(n >> 8);
    *p++ = static_cast<std::uint8_t>(n);
    if (!value.empty())
        std::memcpy(p, value.data(), value.size());
    return p + value.size();
}

std::span<const std::uint8_t> bytes_of(std::string_view s) noexcept {
    return {reinterpret_cast<const std::uint8_t *>(s.data()), s.size()};
}

std::size_t ready_body_size(socket_type self, std::span<const std::uint8_t> routing_id,
                            std::span<const property_view> extra) noexcept {
    std::size_t n = 1 + 5 + property_size("Socket-Type", socket_type_name(self).size());
    if (sends_identity(self))
        n += property_size("Identity", routing_id.size());
    for (const auto &p : extra)
        n += property_size(p.name, p.value.size());
    return n;
}

}  // namespace

wire_error parse_command(std::span<const std::uint8_t> body, command_view &out) noexcept {
    if (body.empty() || body[0] == 0 || body[0] > body.size() - 1)
        return wire_error::malformed_command;
    const auto name = body.subspan(1, body[0]);
    for (std::uint8_t c : name)
        if (!is_alpha(c))
            return wire_error::malformed_command;
    out.name = as_chars(name);
    out.kind = kind_of(out.name);
    out.data = body.subspan(1 + name.size());
    return wire_error::none;
}

bool metadata_reader::next(property_view &p) noexcept {
    if (rest_.empty() || error_ != wire_error::none)
        return false;
    const std::size_t name_len = rest_[0];
    if (name_len == 0 || rest_.size() < 1 + name_len + 4) {
        error_ = wire_error::malformed_metadata;
        return false;
    }
    const auto name = rest_.subspan(1, name_len);
    for (std::uint8_t c : name)
        if (!is_name_char(c)) {
            error_ = wire_error::malformed_metadata;
            return false;
        }
    const std::uint32_t value_len = read_u32(rest_.data() + 1 + name_len);
    const std::size_t after_len = 1 + name_len + 4;
    // RFC 37: value "SHALL be 0 to 2,147,483,647 ... octets".
    if (value_len > 0x7FFFFFFFu || value_len > rest_.size() - after_len) {
        error_ = wire_error::malformed_metadata;
        return false;
    }
    p.name = as_chars(name);
    p.value = rest_.subspan(after_len, value_len);
    rest_ = rest_.subspan(after_len + value_len);
    return true;
}

wire_error validate_metadata(std::span<const std::uint8_t> data) noexcept {
    metadata_reader r(data);
    property_view p;
    while (r.next(p)) {
    }
    return r.error();
}

bool find_property(std::span<const std::uint8_t> data, std::string_view name,
                   std::span<const std::uint8_t> &value) noexcept {
    metadata_reader r(data);
    property_view p;
    while (r.next(p))
        if (iequals(p.name, name)) {
            value = p.value;
            return true;
        }
    return false;
}

std::size_t ready_frame_size(socket_type self, std::span<const std::uint8_t> routing_id,
                             std::span<const property_view> extra) noexcept {
    const std::size_t body = ready_body_size(self, routing_id, extra);
    return header_size_for(body) + body;
}

std::size_t write_ready_frame(std::span<std::uint8_t> out, socket_type self,
                              std::span<const std::uint8_t> routing_id,
                              std::span<const property_view> extra) noexcept {
    for (const auto &p : extra)
        if (p.name.empty() || p.name.size() > 255)
            return 0;
    if (sends_identity(self) && routing_id.size() > 255)
        return 0;  // RFC 37: identity = 0*255OCTET
    const std::size_t body = ready_body_size(self, routing_id, extra);
    const std::size_t total = header_size_for(body) + body;
    if (out.size() < total)
        return 0;
    std::uint8_t *p = out.data();
    p += write_frame_header(p, body, false, true);
    *p++ = 5;
    std::memcpy(p, "READY", 5);
    p += 5;
    p = put_property(p, "Socket-Type", bytes_of(socket_type_name(self)));
    if (sends_identity(self))
        p = put_property(p, "Identity", routing_id);
    for (const auto &e : extra)
        p = put_property(p, e.name, e.value);
    return total;
}

std::size_t write_error_frame(std::span<std::uint8_t> out, std::string_view reason) noexcept {
    if (reason.size() > 255)
        reason = reason.substr(0, 255);
    const std::size_t body = 1 + 5 + 1 + reason.size();
    const std::size_t total = header_size_for(body) + body;
    if (out.size() < total)
        return 0;
    std::uint8_t *p = out.data();
    p += write_frame_header(p, body, false, true);
    *p++ = 5;
    std::memcpy(p, "ERROR", 5);
    p += 5;
    *p++ = static_cast<std::uint8_t>(reason.size());
    if (!reason.empty())
        std::memcpy(p, reason.data(), reason.size());
    return total;
}

wire_error parse_error_data(std::span<const std::uint8_t> data, std::string_view &reason) noexcept {
    // error-reason = short-size 0*255VCHAR. Trailing octets are tolerated (as libzmq
    // does); a length running past the body is not.
    if (data.empty() || data[0] > data.size() - 1)
        return wire_error::malformed_error_command;
    reason = as_chars(data.subspan(1, data[0]));
    return wire_error::none;
}

wire_error parse_ping_data(std::span<const std::uint8_t> data, std::uint16_t &ttl_deciseconds,
                           std::span<const std::uint8_t> &context) noexcept {
    if (data.size() < 2 || data.size() > 2 + max_ping_context)
        return wire_error::malformed_ping;
    ttl_deciseconds = static_cast<std::uint16_t>((data[0] << 8) | data[1]);
    context = data.subspan(2);
    return wire_error::none;
}

wire_error parse_pong_data(std::span<const std::uint8_t> data,
                           std::span<const std::uint8_t> &context) noexcept {
    if (data.size() > max_ping_context)
        return wire_error::malformed_ping;
    context = data;
    return wire_error::none;
}

subscription_action classify_subscription_message(std::span<const std::uint8_t> body,
                                                  std::span<const std::uint8_t> &topic) noexcept {
    if (body.empty() || body[0] > 1)
        return subscription_action::none;
    topic = body.subspan(1);
    return body[0] == 1 ? subscription_action::subscribe : subscription_action::cancel;
}

}  // namespace zlink::wire
