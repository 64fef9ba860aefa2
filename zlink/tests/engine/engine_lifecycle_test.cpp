// The engine's lifecycle (transport/engine.hpp: engine_phase): a connection
// goes handshake -> ready -> stopped, or handshake -> failing (our ERROR on
// its way) -> stopped; the host hears of the end once, and never after a
// terminate() it asked for itself.
#include "transport/engine.hpp"

#include "engine_fixtures.hpp"

using namespace engine_test;
using zlink::engine_phase;

TEST_F(EnginePair, AConnectionIsInTheHandshakeUntilBothReadiesThenReady) {
    start(options_for(ZMQ_PAIR), options_for(ZMQ_PAIR));
    EXPECT_EQ(a.engine->phase(), engine_phase::handshake);
    EXPECT_FALSE(a.ready);
    ASSERT_TRUE(run_until(ioc, [&] { return a.ready && b.ready; }));
    EXPECT_EQ(a.engine->phase(), engine_phase::ready);
    EXPECT_EQ(b.engine->phase(), engine_phase::ready);
}

TEST_F(EngineRaw, ARawConnectionIsReadyAtStart) {
    start(options_for(ZMQ_STREAM), nullptr);
    EXPECT_EQ(host.engine->phase(), engine_phase::ready);
    EXPECT_TRUE(host.ready.has_value());
}

TEST_F(EngineRaw, AFailedHandshakeWritesItsErrorThenStopsOnce) {
    start_null(options_for(ZMQ_PAIR));
    write_all(peer(), greeting_bytes() + ready_bytes("PUB"));
    ASSERT_TRUE(run_until(ioc, [&] { return host.engine->phase() != engine_phase::handshake; }));
    // Failing, or already stopped if our ERROR went out at once.
    EXPECT_TRUE(host.engine->phase() == engine_phase::failing ||
                host.engine->phase() == engine_phase::stopped);
    ASSERT_TRUE(run_until(ioc, [&] { return host.ended.has_value(); }));
    EXPECT_EQ(host.engine->phase(), engine_phase::stopped);
    EXPECT_FALSE(host.ended->handshake_done);
    EXPECT_NE(read_available(peer()).find("\x05"
                                          "ERROR"),
              std::string::npos);
}

TEST_F(EngineRaw, TerminateStopsWithoutTellingTheHost) {
    start_null(options_for(ZMQ_PAIR));
    write_all(peer(), greeting_bytes() + ready_bytes("PAIR"));
    ASSERT_TRUE(run_until(ioc, [&] { return host.ready.has_value(); }));
    host.engine->terminate();
    EXPECT_EQ(host.engine->phase(), engine_phase::stopped);
    host.engine->restart_output();  // no effect once stopped
    host.engine->restart_input();
    run_until(ioc, [] { return false; }, std::chrono::milliseconds(30));
    EXPECT_FALSE(host.ended.has_value());
}

TEST_F(EngineRaw, CloseBeforeTheHandshakeStopsAtOnceAsRequested) {
    start_null(options_for(ZMQ_PAIR));
    host.engine->close_after_flush();
    EXPECT_EQ(host.engine->phase(), engine_phase::stopped);
    ASSERT_TRUE(host.ended.has_value());
    EXPECT_TRUE(host.ended->requested);
    EXPECT_FALSE(host.ended->handshake_done);
}

TEST_F(EngineRaw, APeerHangingUpWhileReadyEndsWithTheHandshakeDone) {
    start_null(options_for(ZMQ_PAIR));
    write_all(peer(), greeting_bytes() + ready_bytes("PAIR"));
    ASSERT_TRUE(run_until(ioc, [&] { return host.ready.has_value(); }));
    ::shutdown(peer(), SHUT_WR);
    ASSERT_TRUE(run_until(ioc, [&] { return host.ended.has_value(); }));
    EXPECT_TRUE(host.ended->handshake_done);
    EXPECT_EQ(host.engine->phase(), engine_phase::stopped);
}
