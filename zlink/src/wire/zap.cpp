// ZAP request frames and reply checks (RFC 27, libzmq 4.3.5's order of checks).
#include "wire/zap.hpp"

#include "wire/command.hpp"

namespace zlink::wire {

namespace {

zap_frame frame_of(std::string_view s) { return zap_frame(s.begin(), s.end()); }

std::string_view text_of(std::span<const std::uint8_t> s) {
    return {reinterpret_cast<const char *>(s.data()), s.size()};
}

bool valid_status(std::string_view code) {
    return code == "200" || code == "300" || code == "400" || code == "500";
}

}  // namespace

std::vector<zap_frame> zap_request_frames(const zap_request &request, std::string_view domain,
                                          std::string_view address,
                                          std::span<const std::uint8_t> identity) {
    std::vector<zap_frame> frames;
    frames.reserve(7 + request.credentials.size());
    frames.emplace_back();  // delimiter
    frames.push_back(frame_of(zap_version));
    frames.push_back(frame_of(zap_request_id));
    frames.push_back(frame_of(domain));
    frames.push_back(frame_of(address));
    frames.emplace_back(identity.begin(), identity.end());
    frames.push_back(frame_of(request.mechanism));
    for (const auto &c : request.credentials)
        frames.push_back(c);
    return frames;
}

wire_error parse_zap_reply(std::span<const zap_frame_view> frames, zap_reply &out) {
    if (frames.size() != zap_reply_frames)
        return wire_error::zap_malformed_reply;
    for (std::size_t i = 0; i < frames.size(); ++i)
        if (frames[i].more != (i + 1 < frames.size()))
            return wire_error::zap_malformed_reply;
    if (!frames[0].body.empty())
        return wire_error::zap_unspecified;
    if (text_of(frames[1].body) != zap_version)
        return wire_error::zap_bad_version;
    if (text_of(frames[2].body) != zap_request_id)
        return wire_error::zap_bad_request_id;
    const std::string_view code = text_of(frames[3].body);
    if (!valid_status(code))
        return wire_error::zap_invalid_status_code;
    // Metadata in ZMTP property encoding; libzmq accepts an empty frame.
    if (validate_metadata(frames[6].body) != wire_error::none)
        return wire_error::zap_invalid_metadata;
    out = zap_reply{};
    out.status_code.assign(code);
    out.status_text.assign(text_of(frames[4].body));
    out.user_id.assign(text_of(frames[5].body));
    out.metadata.assign(frames[6].body.begin(), frames[6].body.end());
    return wire_error::none;
}

bool zap_holds_connection(wire_error error, std::string_view detail) noexcept {
    return error == wire_error::auth_failed && detail == "300";
}

}  // namespace zlink::wire
