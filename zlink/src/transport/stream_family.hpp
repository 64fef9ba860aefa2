// stream_family: what differs between the two stream transports, tcp and
// ipc, so that listener, connecter and session are written once.
//
//   bind side     which address to bind (tcp: "*" / names / IPv6 rules; ipc:
//                 wildcard directory, stale socket file), acceptor options,
//                 the ZMQ_LAST_ENDPOINT text, cleanup at unbind.
//   connect side  address check at zmq_connect, asynchronous resolution.
//   connections   kernel options for each new connection (socket_tuning).
#pragma once
#include <asio/basic_socket_acceptor.hpp>
#include <asio/generic/stream_protocol.hpp>
#include <asio/io_context.hpp>
#include <asio/socket_base.hpp>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <sys/stat.h>

#include "core/knobs.hpp"
#include "core/options.hpp"

namespace zlink {

class stream_family {
public:
    using endpoint_type = asio::generic::stream_protocol::endpoint;
    using acceptor_type = asio::basic_socket_acceptor<asio::generic::stream_protocol>;
    using resolve_handler = std::function<void(const asio::error_code &, const endpoint_type &)>;
    // Bind-time facts a listener keeps: its ZMQ_LAST_ENDPOINT text when known
    // before binding (ipc), and what to remove when it stops (ipc files).
    struct bound_files {
        std::string text;
        std::string socket_path;
        std::string directory;
        // The socket file this listener made (ipc), so closing removes only that
        // one and never a file a new bind on the same path has put there since.
        // Device and inode alone do not tell: a new bind unlinks our file and the
        // file system may give the new one the freed inode number at once (seen:
        // a closed server's late cleanup unlinked its successor's socket file), so
        // the change time, to the nanosecond, is compared too.
        dev_t socket_dev = 0;
        ino_t socket_ino = 0;
        struct timespec socket_ctime{};
        // The ipc family's claim on socket_path (ipc.cpp): within the process,
        // only the listener holding a path's latest claim may remove its file.
        std::uint64_t claim = 0;
        void remember_socket_file() {
            struct stat st{};
            if (!socket_path.empty() && ::stat(socket_path.c_str(), &st) == 0) {
                socket_dev = st.st_dev;
                socket_ino = st.st_ino;
                socket_ctime = st.st_ctim;
            }
        }
        bool socket_file_is_ours() const {
            struct stat st{};
            return socket_ino != 0 && ::stat(socket_path.c_str(), &st) == 0 &&
                   st.st_dev == socket_dev && st.st_ino == socket_ino &&
                   st.st_ctim.tv_sec == socket_ctime.tv_sec &&
                   st.st_ctim.tv_nsec == socket_ctime.tv_nsec;
        }
    };

    virtual ~stream_family() = default;
    // This family's own ZMQ_ASIO_* knobs (zlink.h), and what they make of a
    // connection's I/O sizes: each family decides, so nothing outside it names
    // tcp or ipc (issue 30).
    virtual std::span<const knob_desc> knobs() const = 0;
    virtual void resolve_batch(const knobs_t &k, options_t::batch_options &b) const = 0;
    // Whether connects honour ZMQ_SOCKS_PROXY (tcp only, as libzmq).
    virtual bool dials_through_socks() const { return false; }

    // 0, or -1 with errno (EINVAL bad address, ENODEV unknown host, ...).
    virtual int bind_endpoint(const std::string &address, const options_t &opts, endpoint_type &out,
                              bound_files &files) const = 0;
    // Between open() and bind(): e.g. SO_REUSEADDR, dual-stack IPv6.
    virtual void prepare_acceptor(acceptor_type &acceptor, const endpoint_type &ep,
                                  const options_t &opts) const = 0;
    // ZMQ_LAST_ENDPOINT of a bound acceptor ("tcp://127.0.0.1:5555", "ipc:///tmp/x").
    virtual std::string bound_text(const acceptor_type &acceptor,
                                   const bound_files &files) const = 0;
    virtual void remove_files(const bound_files &files) const = 0;

    // zmq_connect's synchronous check: 0, or -1 with errno EINVAL.
    virtual int check_connect_address(const std::string &address) const = 0;
    // Finds the endpoint to connect to; calls `done` on the io_context's thread.
    virtual void resolve(asio::io_context &ioc, const std::string &address, const options_t &opts,
                         resolve_handler done) const = 0;

    // Kernel options for a new connection (before its engine starts).
    virtual void tune(int fd, const options_t &opts) const = 0;
    // Kernel options for a connecting socket, after open and before connect.
    virtual void prepare_connect(int, const options_t &) const {}
    // After prepare_connect: binds the connecting socket to the address's source
    // part, if it has one (tcp "source;destination"). 0, or -1 with errno.
    virtual int bind_source(int, const std::string &, const options_t &) const { return 0; }
};

// The batch sizes of a family with its own in/out batch knobs (option
// numbers): per-transport size when set, else the global one.
inline void resolve_batch_sizes(const knobs_t &k, int in_option, int out_option,
                                options_t::batch_options &b) {
    b.in = k.in_for(in_option);
    b.out = k.out_for(out_option);
    b.in_ceiling = k.in_ceiling_for(in_option);
    b.out_ceiling = k.out_ceiling_for(out_option);
}

const stream_family &tcp_family();
const stream_family &ipc_family();

}  // namespace zlink
