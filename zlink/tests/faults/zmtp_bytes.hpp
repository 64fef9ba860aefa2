// Hand-made ZMTP 3.x bytes for the hostile-input tests (RFC 37 layouts), so
// the attacks do not depend on the codec under test.
#pragma once

#include <cstdint>
#include <string>

namespace faults {

// 64-octet greeting: signature, version, mechanism (NUL padded), as-server, filler.
inline std::string greeting(int major = 3, int minor = 1, const std::string &mech = "NULL") {
    std::string g(64, '\0');
    g[0] = '\xff';
    g[9] = '\x7f';
    g[10] = static_cast<char>(major);
    g[11] = static_cast<char>(minor);
    g.replace(12, mech.size(), mech);
    return g;
}
// READY with one property, Socket-Type = type.
inline std::string ready(const std::string &type) {
    const std::string name = "Socket-Type", value = type;
    std::string body = "\x05READY";
    body += static_cast<char>(name.size());
    body += name;
    body += std::string("\0\0\0", 3) + static_cast<char>(value.size());
    body += value;
    return std::string("\x04", 1) + static_cast<char>(body.size()) + body;
}
inline std::string ready_dealer() { return ready("DEALER"); }
inline std::string long_frame_header(uint64_t size) {
    std::string h(1, '\x02');  // long, no MORE
    for (int i = 7; i >= 0; --i)
        h += static_cast<char>((size >> (8 * i)) & 0xff);
    return h;
}

}  // namespace faults
