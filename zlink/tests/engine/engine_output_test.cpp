// The engine's output side (transport/engine_output.hpp) seen through its
// write state: the handshake's bytes go first, a full socket buffer makes it
// wait for writability and nothing else writes meanwhile, and an idle output
// is free again once the peer has read everything.
#include "transport/engine_output.hpp"

#include "engine_fixtures.hpp"

using namespace engine_test;
using zlink::write_state;

TEST_F(EngineRaw, TheHandshakeIsWrittenFirstThenTheOutputIsIdle) {
    start_null(options_for(ZMQ_PAIR));
    EXPECT_EQ(host.engine->output().writing(), write_state::handshake);
    write_all(peer(), greeting_bytes() + ready_bytes("PAIR"));
    std::string got;
    ASSERT_TRUE(run_until(ioc, [&] {
        got += read_available(peer());
        return host.ready.has_value() && host.engine->output().writing() == write_state::idle;
    }));
    got += read_available(peer());
    ASSERT_FALSE(got.empty());
    EXPECT_EQ(got[0], '\xff') << "the greeting's signature goes first";
    EXPECT_NE(got.find("\x05READY"), std::string::npos);
}

TEST_F(EngineRaw, AFullSocketBufferWaitsForWritabilityThenSendsTheRestInOrder) {
    int small = 4096;
    ::setsockopt(fds_[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    ::setsockopt(peer(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    start_null(options_for(ZMQ_PAIR));
    write_all(peer(), greeting_bytes() + ready_bytes("PAIR"));
    std::string got;
    ASSERT_TRUE(run_until(ioc, [&] {
        got += read_available(peer());
        return host.ready.has_value() && host.engine->output().writing() == write_state::idle;
    }));
    const std::string big = pattern(300000, 3);
    host.send(big, true);
    host.send("last");
    ASSERT_TRUE(
        run_until(ioc, [&] { return host.engine->output().writing() == write_state::writable; }));
    host.send("queued while waiting");  // must not write past the waiting batch
    EXPECT_EQ(host.engine->output().writing(), write_state::writable);
    ASSERT_TRUE(run_until(
        ioc,
        [&] {
            got += read_available(peer());
            return got.find("queued while waiting") != std::string::npos;
        },
        std::chrono::seconds(20)));
    const auto at_big = got.find(big.substr(0, 64));
    ASSERT_NE(at_big, std::string::npos);
    EXPECT_TRUE(got.compare(at_big, big.size(), big) == 0)
        << "the large body arrived cut or out of order";
    EXPECT_LT(got.find("last"), got.find("queued while waiting"));
    EXPECT_FALSE(host.ended);
}
