// The ipc stream family: Unix domain sockets (paths, abstract "@name", "*").
#include <stdlib.h>
#include <unistd.h>

#include <asio/local/stream_protocol.hpp>
#include <cerrno>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "transport/address.hpp"
#include "transport/socket_tuning.hpp"
#include "transport/stream_family.hpp"
#include "zlink.h"

namespace zlink {

namespace {

// Who in this process may remove the socket file at a path.  zmq_close and
// zmq_unbind return before the listener stops: its IO thread removes the file
// later, while the caller may already be binding the same path again.  The
// file-identity check and the unlink are two steps, and a bind that unlinks
// the old file and creates its own can fall between them (on a busy single
// core the IO thread loses the CPU there, or waits for the directory lock the
// binding thread holds): the old listener then deletes its successor's file,
// and the new socket listens where no peer can reach it (libzmq's
// test_rebind_ipc hung in zmq_send so).  A bind takes the path before it
// clears a stale file, and a removal checks that it still holds the path and
// unlinks under the same lock, so within the process the two never
// interleave.  Another process binding the same path, or another spelling of
// the same file (claims are keyed by the path as written), is still told apart
// by the file's identity alone (bound_files::socket_file_is_ours).
class path_claims {
public:
    // Never destroyed: an IO thread may still stop a listener during exit.
    static path_claims &instance() {
        static path_claims *claims = new path_claims;
        return *claims;
    }

    // The path is the caller's from now on; a stale file there is removed
    // (libzmq replaces a stale socket file).
    std::uint64_t take(const std::string &path) {
        std::lock_guard<std::mutex> lock(mutex_);
        ::unlink(path.c_str());
        latest_[path] = ++last_;
        return last_;
    }

    // Ends the claim; removes the file only if no bind has taken the path
    // since and the file is still the one this claim's listener made.
    void give_back(const stream_family::bound_files &files) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = latest_.find(files.socket_path);
        if (it == latest_.end() || it->second != files.claim)
            return;
        latest_.erase(it);
        if (files.socket_file_is_ours())
            ::unlink(files.socket_path.c_str());
    }

private:
    std::mutex mutex_;
    std::unordered_map<std::string, std::uint64_t> latest_;
    std::uint64_t last_ = 0;
};

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
        b.drain_wake = true;   // to a peer pinned elsewhere (transport/drain_wake.hpp)
        b.direct_send = true;  // large messages, while the IO thread is idle (core/direct_send.hpp)
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
            files.socket_path = path;
            files.claim = path_claims::instance().take(path);
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
        if (!files.socket_path.empty())
            path_claims::instance().give_back(files);
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
