// STREAM: the library's ZMQ_STREAM socket (b, bound) against a plain TCP peer
// (a, TCP_NODELAY) that is the same code for every library.
//
// The byte stream has no message boundaries, so both sides cut it into records of
// --size bytes. Throughput: the plain peer writes records (batched into writes of
// up to 64 KiB, the way a ZMTP library batches small messages), the STREAM socket
// receives [routing id][chunk] frames and the harness reassembles and verifies the
// records. Latency: the peer writes one record, the STREAM socket echoes it back as
// [routing id][record], the peer reads it back.
#include <algorithm>
#include <cstring>
#include <vector>

#include "../common/endpoint.hpp"
#include "../common/process.hpp"
#include "../common/raw_socket.hpp"
#include "../common/report.hpp"
#include "../common/runner.hpp"
#include "../common/zmq_end.hpp"

using namespace bench;

namespace {

constexpr std::size_t kBurstWrite = 64 * 1024;
constexpr std::uint8_t kHello = 'S';

class PlainTcpEnd final : public End {
public:
    PlainTcpEnd(RawSocket sock, std::size_t size)
        : sock_(std::move(sock)), record_(std::max<std::size_t>(size, 1)) {}

    void send(const std::uint8_t *data, std::size_t n) override {
        if (!burst_)
            return sock_.write_all(data, n);
        if (batch_.size() + n > kBurstWrite && !batch_.empty())
            flush();
        batch_.insert(batch_.end(), data, data + n);
        if (batch_.size() >= kBurstWrite)
            flush();
    }
    View recv() override {
        sock_.read_exact(record_.data(), record_.size());
        return View{record_.data(), record_.size()};
    }
    void send_back() override { exit_error("the plain TCP peer never echoes"); }
    void begin_burst() override { burst_ = true; }
    void end_burst() override {
        flush();
        burst_ = false;
    }
    // The peer says hello with one byte and expects it back (the STREAM side learns
    // the peer's routing id from it).
    void establish(Link &, bool, int) override {
        const std::uint8_t hello = kHello;
        sock_.write_all(&hello, 1);
        std::uint8_t back = 0;
        sock_.read_exact(&back, 1);
        if (back != hello)
            exit_verify("STREAM handshake: the echoed hello is wrong");
    }

private:
    void flush() {
        if (!batch_.empty())
            sock_.write_all(batch_.data(), batch_.size());
        batch_.clear();
    }
    RawSocket sock_;
    std::vector<std::uint8_t> record_;
    std::vector<std::uint8_t> batch_;
    bool burst_ = false;
};

class StreamSocketEnd final : public End {
public:
    StreamSocketEnd(void *s, std::size_t size) : s_(s), size_(size), record_(size) {
        zmq_msg_init(&id_);
        zmq_msg_init(&chunk_);
    }
    ~StreamSocketEnd() override {
        zmq_msg_close(&id_);
        zmq_msg_close(&chunk_);
    }

    void send(const std::uint8_t *data, std::size_t n) override {
        send_frame(id_bytes_.data(), id_bytes_.size(), ZMQ_SNDMORE);
        send_frame(data, n, 0);
    }

    View recv() override {
        std::size_t filled = 0;
        for (;;) {
            const std::size_t left = zmq_msg_size(&chunk_) - offset_;
            const auto *p = static_cast<const std::uint8_t *>(zmq_msg_data(&chunk_)) + offset_;
            if (filled == 0 && left >= size_) {  // whole record inside one chunk: no copy
                offset_ += size_;
                last_ = View{p, size_};
                return last_;
            }
            const std::size_t take = std::min(left, size_ - filled);
            std::memcpy(record_.data() + filled, p, take);
            filled += take;
            offset_ += take;
            if (filled == size_) {
                last_ = View{record_.data(), size_};
                return last_;
            }
            next_chunk();
        }
    }

    void send_back() override { send(last_.data, last_.size); }

    // Waits for the peer's one-byte hello, learns its routing id, answers it.
    void establish(Link &, bool, int) override {
        next_chunk();
        if (zmq_msg_size(&chunk_) != 1 ||
            *static_cast<const std::uint8_t *>(zmq_msg_data(&chunk_)) != kHello)
            exit_verify("STREAM handshake: expected the peer's 1-byte hello");
        offset_ = 1;
        send(&kHello, 1);
    }

private:
    void send_frame(const void *data, std::size_t n, int flags) {
        while (zmq_send(s_, data, n, flags) < 0) {
            if (zmq_errno() == EINTR)
                continue;
            if (zmq_errno() == EAGAIN)
                exit_timeout("STREAM send blocked longer than --timeout-ms");
            exit_zmq_error("zmq_send (STREAM)");
        }
    }
    void recv_msg(zmq_msg_t *m) {
        while (zmq_msg_recv(m, s_, 0) < 0) {
            if (zmq_errno() == EINTR)
                continue;
            if (zmq_errno() == EAGAIN)
                exit_timeout("STREAM socket received nothing for --timeout-ms");
            exit_zmq_error("zmq_msg_recv (STREAM)");
        }
    }
    // Next non-empty data chunk; empty ones are connect/disconnect notifications.
    void next_chunk() {
        for (;;) {
            recv_msg(&id_);
            if (!zmq_msg_more(&id_))
                exit_verify("STREAM: routing-id frame without a data frame");
            recv_msg(&chunk_);
            if (zmq_msg_more(&chunk_))
                exit_verify("STREAM: unexpected third frame");
            offset_ = 0;
            if (zmq_msg_size(&chunk_) == 0)
                continue;
            const auto *id = static_cast<const char *>(zmq_msg_data(&id_));
            if (id_bytes_.empty())
                id_bytes_.assign(id, zmq_msg_size(&id_));
            else if (id_bytes_.size() != zmq_msg_size(&id_) ||
                     std::memcmp(id_bytes_.data(), id, id_bytes_.size()) != 0)
                exit_verify("STREAM: data arrived from an unexpected routing id");
            return;
        }
    }

    void *s_;
    std::size_t size_;
    std::vector<std::uint8_t> record_;
    zmq_msg_t id_, chunk_;
    std::size_t offset_ = 0;
    std::string id_bytes_;
    View last_{nullptr, 0};
};

Side make_receiver(void *ctx, const Options &o, const std::string &bind) {
    Side side;
    void *s = make_socket(ctx, ZMQ_STREAM, o);
    side.bound.push_back(bind_endpoint(s, bind));
    side.sockets.push_back(s);
    side.end = std::make_unique<StreamSocketEnd>(s, o.size);
    return side;
}

Side make_sender(void *, const Options &o, const std::vector<std::string> &endpoints) {
    Endpoint ep;
    std::string error;
    if (!parse_endpoint(endpoints.at(0), ep, error))
        exit_error("STREAM peer: " + error);
    Side side;
    side.end = std::make_unique<PlainTcpEnd>(
        connect_to_endpoint(ep, o.timeout_ms, "the STREAM socket"), o.size);
    return side;
}

}  // namespace

int main(int argc, char **argv) {
    return run_benchmark(
        argc, argv,
        PatternSpec{{"STREAM", true, 1},
                    ZMQ_STREAM,
                    "plain TCP socket (TCP_NODELAY, 64 KiB write batches) -> ZMQ_STREAM(bind)",
                    make_receiver,
                    make_sender});
}
