// The ipc stream family: Unix domain sockets (paths, abstract "@name", "*").
#include <stdlib.h>
#include <unistd.h>

#include <asio/local/stream_protocol.hpp>
#include <cerrno>

#include "transport/address.hpp"
#include "transport/socket_tuning.hpp"
#include "transport/stream_family.hpp"
#include "zlink.h"

namespace zlink {

namespace {

using range_t = knob_desc::range_t;
const knob_desc ipc_knobs[] = {
    {ZMQ_ASIO_IN_BATCH_SIZE_IPC, "ZMQ_ASIO_IN_BATCH_SIZE_IPC", range_t::batch},
    {ZMQ_ASIO_OUT_BATCH_SIZE_IPC, "ZMQ_ASIO_OUT_BATCH_SIZE_IPC", range_t::batch},
};

class ipc_family_t final : public stream_family {
public:
    std::span<const knob_desc> knobs() const override { return ipc_knobs; }
    void resolve_batch(const knobs_t &k, options_t::batch_options &b) const override {
        resolve_batch_sizes(k, ZMQ_ASIO_IN_BATCH_SIZE_IPC, ZMQ_ASIO_OUT_BATCH_SIZE_IPC, b);
    }

    int bind_endpoint(const std::string &address, const options_t &, endpoint_type &out,
                      bound_files &files) const override {
        std::string path = address;
        if (path != "*" && check_ipc_address(path) != 0)
            return -1;  // before Asio, which throws for a path sockaddr_un cannot hold
        if (path == "*") {
            // Wildcard ipc: a fresh private directory holds the socket file.
            char tmpl[] = "/tmp/zlink-ipc-XXXXXX";
            if (!mkdtemp(tmpl)) {
                errno = EADDRINUSE;
                return -1;
            }
            files.directory = tmpl;
            path = files.directory + "/socket";
        }
        if (path[0] != '@') {
            ::unlink(path.c_str());  // libzmq replaces a stale socket file
            files.socket_path = path;
        }
        files.text = "ipc://" + path;
        out = endpoint_type(ipc_endpoint(path));
        return 0;
    }

    void prepare_acceptor(acceptor_type &, const endpoint_type &,
                          const options_t &) const override {}

    std::string bound_text(const acceptor_type &, const bound_files &files) const override {
        return files.text;
    }

    void remove_files(const bound_files &files) const override {
        // A socket closed and bound again at once on the same path: the new
        // listener's file may already be there; leave it alone.
        if (!files.socket_path.empty() && files.socket_file_is_ours())
            ::unlink(files.socket_path.c_str());
        if (!files.directory.empty())
            ::rmdir(files.directory.c_str());
    }

    int check_connect_address(const std::string &address) const override {
        return check_ipc_address(address);  // ENAMETOOLONG at zmq_connect, as libzmq
    }

    void resolve(asio::io_context &, const std::string &address, const options_t &,
                 resolve_handler done) const override {
        done(asio::error_code(), endpoint_type(ipc_endpoint(address)));
    }

    void tune(int fd, const options_t &opts) const override { apply_ipc_buffer_sizes(fd, opts); }
};

}  // namespace

const stream_family &ipc_family() {
    static const ipc_family_t family;
    return family;
}

}  // namespace zlink
