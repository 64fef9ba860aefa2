// The engine's input side (transport/engine_input.hpp) seen through its state:
// a read is owed exactly when the host can take frames, commands between
// messages are handled there and never reach the host, and a body too large
// for the chunk arrives whole.
#include "transport/engine_input.hpp"

#include <thread>

#include "engine_fixtures.hpp"

using namespace engine_test;
using zlink::read_state;

TEST_F(EngineRaw, AFullHostLeavesNoReadOwedAndRestartOwesOneAgain) {
    host.capacity = 1;
    start_null(options_for(ZMQ_PAIR));
    write_all(peer(), greeting_bytes() + ready_bytes("PAIR") + frame_bytes("one", false) +
                          frame_bytes("two", false) + frame_bytes("three", false));
    ASSERT_TRUE(run_until(ioc, [&] { return host.engine->input().blocked(); }));
    run_until(ioc, [] { return false; }, std::chrono::milliseconds(50));
    EXPECT_EQ(host.received.size(), 1u);
    EXPECT_EQ(host.engine->input().reading(), read_state::idle) << "a blocked input must not read";
    host.capacity = SIZE_MAX;
    host.engine->restart_input();
    ASSERT_TRUE(run_until(ioc, [&] { return host.received.size() == 3; }));
    EXPECT_FALSE(host.engine->input().blocked());
    // The socket is empty now: the read owed waits for readability.
    run_until(ioc, [] { return false; }, std::chrono::milliseconds(20));
    EXPECT_EQ(host.engine->input().reading(), read_state::owed);
}

TEST_F(EngineRaw, APingBetweenMessagesIsAnsweredAndNotDelivered) {
    start_null(options_for(ZMQ_PAIR));
    write_all(peer(), greeting_bytes() + ready_bytes("PAIR") + frame_bytes("a", false) +
                          frame_bytes(std::string("\x04PING\x00\x00"
                                                  "ctx",
                                                  10),
                                      false, true) +
                          frame_bytes("b", false));
    ASSERT_TRUE(run_until(ioc, [&] { return host.received.size() == 2; }));
    EXPECT_EQ(host.received[0].body, "a");
    EXPECT_EQ(host.received[1].body, "b");
    std::string got;
    ASSERT_TRUE(run_until(ioc, [&] {
        got += read_available(peer());
        return got.find("\x04PONGctx") != std::string::npos;
    }));
}

TEST_F(EngineRaw, AMalformedCommandFailsTheConnectionAsAProtocolError) {
    start_null(options_for(ZMQ_PAIR));
    write_all(peer(), greeting_bytes() + ready_bytes("PAIR") + frame_bytes("\x09", false, true));
    ASSERT_TRUE(run_until(ioc, [&] { return host.ended.has_value(); }));
    EXPECT_TRUE(host.ended->handshake_done);
    EXPECT_TRUE(host.received.empty());
}

TEST_F(EngineRaw, ABodyLargerThanTheChunkIsReadIntoTheMessageWhole) {
    options_t o = options_for(ZMQ_PAIR);
    o.batch.in = o.batch.in_ceiling = 256;  // a chunk of 1 KiB
    start_null(o);
    write_all(peer(), greeting_bytes() + ready_bytes("PAIR"));
    ASSERT_TRUE(run_until(ioc, [&] { return host.ready.has_value(); }));
    const std::string body = pattern(200000, 7);
    std::string wire(1, '\x02');  // long frame, no MORE
    for (int shift = 56; shift >= 0; shift -= 8)
        wire += static_cast<char>((body.size() >> shift) & 0xff);
    std::thread writer([&] { write_all(peer(), wire + body); });
    const bool got =
        run_until(ioc, [&] { return host.received.size() == 1; }, std::chrono::seconds(20));
    writer.join();
    ASSERT_TRUE(got);
    EXPECT_TRUE(host.received[0].body == body);
}

// Wake-ups (engine_input.hpp): a read that fills the rest of a large body
// lets the host's wake-up wait; chunk reads (small messages) never do; the
// run's last flush, before the engine waits for the socket, always wakes.
TEST_F(EngineRaw, ARunOfFullChunkReadsWakesTheHostPerRead) {
    options_t o = options_for(ZMQ_PAIR);
    o.batch.in = o.batch.in_ceiling = 256;  // reads of 256 bytes: a burst fills many
    start_null(o);
    write_all(peer(), greeting_bytes() + ready_bytes("PAIR"));
    ASSERT_TRUE(run_until(ioc, [&] { return host.ready.has_value(); }));
    host.flushes = host.deferred_flushes = 0;
    std::string burst;
    for (int i = 0; i < 60; ++i)
        burst += frame_bytes(pattern(100, i), false);
    write_all(peer(), burst);
    ASSERT_TRUE(run_until(ioc, [&] { return host.received.size() == 60; }));
    run_until(ioc, [] { return false; }, std::chrono::milliseconds(20));
    EXPECT_GT(host.flushes, 1) << "60 frames of 100 bytes in reads of 256 bytes";
    EXPECT_EQ(host.deferred_flushes, 0) << "small messages wake per read, as before";
    EXPECT_FALSE(host.last_flush_deferred);
    EXPECT_EQ(host.engine->input().reading(), read_state::owed);
}

TEST_F(EngineRaw, ABurstOfLargeBodiesWakesTheHostOnceTheRunEnds) {
    options_t o = options_for(ZMQ_PAIR);
    o.batch.in = o.batch.in_ceiling = 256;  // each body's rest (> 1 KiB) is read in place
    start_null(o);
    write_all(peer(), greeting_bytes() + ready_bytes("PAIR"));
    ASSERT_TRUE(run_until(ioc, [&] { return host.ready.has_value(); }));
    host.flushes = host.deferred_flushes = 0;
    // Ten 2,000-byte frames queued whole before the engine reads: every body's
    // rest is read whole while the next frame waits behind it.
    std::string wire;
    for (int i = 0; i < 10; ++i) {
        const std::string body = pattern(2000, i);
        wire += '\x02';
        for (int shift = 56; shift >= 0; shift -= 8)
            wire += static_cast<char>((body.size() >> shift) & 0xff);
        wire += body;
    }
    write_all(peer(), wire);
    ASSERT_TRUE(run_until(ioc, [&] { return host.received.size() == 10; }));
    run_until(ioc, [] { return false; }, std::chrono::milliseconds(20));
    EXPECT_GT(host.deferred_flushes, 0)
        << "whole large bodies in a row should let the wake-up wait";
    EXPECT_LT(host.deferred_flushes, host.flushes);
    EXPECT_FALSE(host.last_flush_deferred) << "the engine waits with a wake-up still owed";
    EXPECT_EQ(host.engine->input().reading(), read_state::owed);
}

TEST_F(EngineRaw, ALoneMessageWakesTheHostAtOnce) {
    start_null(options_for(ZMQ_PAIR));
    write_all(peer(), greeting_bytes() + ready_bytes("PAIR"));
    ASSERT_TRUE(run_until(ioc, [&] { return host.ready.has_value(); }));
    host.flushes = host.deferred_flushes = 0;
    write_all(peer(), frame_bytes("ping", false));
    ASSERT_TRUE(run_until(ioc, [&] { return host.received.size() == 1; }));
    EXPECT_EQ(host.deferred_flushes, 0) << "a short read must not delay the wake-up";
    EXPECT_FALSE(host.last_flush_deferred);
}

TEST_F(EngineRaw, ALargeBodyReadWholeLetsTheWakeUpWaitForTheNextRead) {
    options_t o = options_for(ZMQ_PAIR);
    o.batch.in = o.batch.in_ceiling = 256;
    start_null(o);
    write_all(peer(), greeting_bytes() + ready_bytes("PAIR"));
    ASSERT_TRUE(run_until(ioc, [&] { return host.ready.has_value(); }));
    host.flushes = host.deferred_flushes = 0;
    // Two large frames in one write: the first body is read in place and whole.
    std::string wire;
    for (int i = 0; i < 2; ++i) {
        const std::string body = pattern(50000, i);
        wire += '\x02';
        for (int shift = 56; shift >= 0; shift -= 8)
            wire += static_cast<char>((body.size() >> shift) & 0xff);
        wire += body;
    }
    std::thread writer([&] { write_all(peer(), wire); });
    const bool got =
        run_until(ioc, [&] { return host.received.size() == 2; }, std::chrono::seconds(20));
    writer.join();
    ASSERT_TRUE(got);
    run_until(ioc, [] { return false; }, std::chrono::milliseconds(20));
    EXPECT_FALSE(host.last_flush_deferred) << "the engine waits with a wake-up still owed";
}
