#include "transport/connection_metadata.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <cstdio>
#include <string_view>

#include "wire/command.hpp"

namespace zlink {

std::string peer_address(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getpeername(fd, reinterpret_cast<sockaddr *>(&ss), &len) != 0)
        return {};
    char host[NI_MAXHOST];
    if (::getnameinfo(reinterpret_cast<sockaddr *>(&ss), len, host, sizeof host, nullptr, 0,
                      NI_NUMERICHOST) != 0)
        return {};
    std::string address = host;
    if (ss.ss_family == AF_UNIX) {
        ucred cred{};
        socklen_t size = sizeof cred;
        char ids[64];
        if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &size) == 0) {
            std::snprintf(ids, sizeof ids, ":%u:%u:%d", cred.uid, cred.gid, cred.pid);
            address += ids;
        }
    }
    return address;
}

metadata_t *make_connection_metadata(std::span<const std::uint8_t> ready_properties,
                                     const std::string &peer_address, int fd,
                                     const metadata_t::dict &extra_properties) {
    metadata_t::dict properties = extra_properties;
    wire::metadata_reader reader(ready_properties);
    wire::property_view p;
    while (reader.next(p))
        properties.emplace(
            std::string(p.name),
            std::string(reinterpret_cast<const char *>(p.value.data()), p.value.size()));
    if (!peer_address.empty()) {
        properties.insert_or_assign("Peer-Address", peer_address);
        properties.insert_or_assign("__fd", std::to_string(fd));
    }
    return new metadata_t(std::move(properties));
}

void metadata_feed::reset(metadata_t *m) noexcept {
    if (meta_) {
        meta_->add_ref(-spare_);  // give back the unused block
        meta_->release();         // and the feed's own reference
    }
    meta_ = m;
    spare_ = 0;
}

void metadata_feed::attach(msg_t &frame) noexcept {
    if (!meta_ || frame.metadata())
        return;
    if (spare_ == 0) {
        meta_->add_ref(block);
        spare_ = block;
    }
    --spare_;
    frame.adopt_metadata(meta_);
}

}  // namespace zlink
