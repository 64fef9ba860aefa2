#include "transport/socks_handshake.hpp"

#include <asio/read.hpp>
#include <asio/write.hpp>
#include <cstdlib>
#include <memory>

#include "transport/address.hpp"
#include "transport/socks.hpp"

namespace zlink {

bool socks_target_of(const std::string &address, socks_target &out) {
    const auto semi = address.find(';');
    std::string port;
    if (split_host_port(semi == std::string::npos ? address : address.substr(semi + 1), out.host,
                        port) != 0)
        return false;
    const long p = std::strtol(port.c_str(), nullptr, 10);
    if (p <= 0 || p > 65535)
        return false;
    out.port = static_cast<std::uint16_t>(p);
    return true;
}

namespace {

using socket_type = asio::generic::stream_protocol::socket;

// One handshake in flight: the bytes being written or read, and the step.
// Each completion holds the state alive; the socket outlives it (the
// connecter owns both and closes the socket to abort).
class exchange : public std::enable_shared_from_this<exchange> {
public:
    exchange(socket_type &sock, socks_target target,
             std::function<void(const asio::error_code &)> done)
        : sock_(sock), target_(std::move(target)), done_(std::move(done)) {}

    void start() {
        send(socks_greeting(with_credentials()), [](exchange &x) { x.read_choice(); });
    }

private:
    using step = void (*)(exchange &);

    bool with_credentials() const { return !target_.username.empty(); }

    void send(std::string bytes, step next) {
        out_ = std::move(bytes);
        asio::async_write(
            sock_, asio::buffer(out_),
            [self = shared_from_this(), next](const asio::error_code &ec, std::size_t) {
                if (ec)
                    return self->done_(ec);
                next(*self);
            });
    }

    void receive(std::size_t n, step next) {
        asio::async_read(
            sock_, asio::buffer(in_, n),
            [self = shared_from_this(), next](const asio::error_code &ec, std::size_t) {
                if (ec)
                    return self->done_(ec);
                next(*self);
            });
    }

    // false (and done_ called) when the step failed.
    bool check(socks_error e) {
        if (e == socks_error::ok)
            return true;
        done_(asio::error_code(socks_errno(e), asio::error::get_system_category()));
        return false;
    }

    void read_choice() {
        receive(2, [](exchange &x) {
            if (!x.check(socks_check_choice(x.in_, x.with_credentials())))
                return;
            if (x.with_credentials())
                x.authenticate();
            else
                x.request();
        });
    }

    void authenticate() {
        send(socks_credentials(target_.username, target_.password), [](exchange &x) {
            x.receive(2, [](exchange &y) {
                if (y.check(socks_check_auth_status(y.in_)))
                    y.request();
            });
        });
    }

    void request() {
        std::string bytes;
        if (!check(socks_connect_request(target_.host, target_.port, bytes)))
            return;
        send(std::move(bytes), [](exchange &x) { x.read_reply(); });
    }

    void read_reply() {
        receive(socks_reply_head, [](exchange &x) {
            std::size_t rest = 0;
            if (!x.check(socks_check_reply_head(x.in_, rest)))
                return;
            // The bound address and port that follow are read and not used.
            x.receive(rest, [](exchange &y) { y.done_({}); });
        });
    }

    socket_type &sock_;
    socks_target target_;
    std::function<void(const asio::error_code &)> done_;
    std::string out_;
    std::uint8_t in_[258] = {};  // the longest read: a 255-byte name, its port
};

}  // namespace

void socks_handshake(socket_type &sock, const socks_target &target,
                     std::function<void(const asio::error_code &)> done) {
    std::make_shared<exchange>(sock, target, std::move(done))->start();
}

}  // namespace zlink
