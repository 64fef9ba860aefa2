// engine_t over a socketpair, without sessions, sockets or IO threads:
// greeting and handshake, handshake failures, frames both ways, batching
// boundaries, large bodies, heartbeats, peer hang-up, back-pressure,
// close-after-flush, the frame_transform path and the ZAP hook.
#include "transport/engine.hpp"
#include "transport/write_cap.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "engine_fixtures.hpp"
#include "zmq.h"

using namespace engine_test;
using zlink::engine_t;
using zlink::options_t;

// ------------------------------------------------------------------ handshake

TEST_F(EnginePair, GreetingAndReadyExchangeIdentitiesAndTypes) {
    options_t oa = options_for(ZMQ_DEALER);
    oa.routing_id = "alice";
    start(oa, options_for(ZMQ_ROUTER));
    ASSERT_TRUE(run_until(ioc, [&] { return a.ready && b.ready; }));
    EXPECT_EQ(b.ready->routing_id, "alice");
    EXPECT_EQ(b.ready->socket_type, ZMQ_DEALER);
    EXPECT_EQ(a.ready->socket_type, ZMQ_ROUTER);
    EXPECT_FALSE(a.ended);
    EXPECT_FALSE(b.ended);
}

TEST_F(EnginePair, IncompatibleSocketTypesFailTheHandshakeOnBothSides) {
    start(options_for(ZMQ_PUB), options_for(ZMQ_PUB));
    ASSERT_TRUE(run_until(ioc, [&] { return a.ended && b.ended; }));
    for (auto *h : {&a, &b}) {
        EXPECT_FALSE(h->ready);
        EXPECT_FALSE(h->ended->handshake_done);
    }
    // The side that reads the other's READY first refuses it and closes; the
    // other may then see that close (a hang-up) before it gets to refuse.
    EXPECT_TRUE(a.ended->event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ||
                b.ended->event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL);
}

TEST_F(EngineRaw, IncompatiblePeerGetsOurErrorCommandBeforeTheClose) {
    start_null(options_for(ZMQ_PAIR));
    write_all(peer(), greeting_bytes() + ready_bytes("PUB"));
    ASSERT_TRUE(run_until(ioc, [&] { return host.ended.has_value(); }));
    bool eof = false;
    std::string got = read_available(peer(), &eof);
    EXPECT_NE(got.find("\x05"
                       "ERROR"),
              std::string::npos)
        << "no ERROR command before the close";
    EXPECT_TRUE(eof);
    EXPECT_EQ(host.ended->event, ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL);
}

TEST_F(EngineRaw, OtherMechanismIsAMechanismMismatch) {
    start_null(options_for(ZMQ_PAIR));
    write_all(peer(), greeting_bytes("PLAIN"));
    ASSERT_TRUE(run_until(ioc, [&] { return host.ended.has_value(); }));
    EXPECT_FALSE(host.ended->handshake_done);
    EXPECT_EQ(host.ended->event, ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL);
    EXPECT_EQ(host.ended->value, ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH);
}

TEST_F(EngineRaw, HandshakeTimeoutDropsAPeerThatSaysNothing) {
    options_t o = options_for(ZMQ_PAIR);
    o.liveness.handshake_ivl = 50;
    start_null(o);
    ASSERT_TRUE(run_until(ioc, [&] { return host.ended.has_value(); }));
    EXPECT_FALSE(host.ended->handshake_done);
    EXPECT_EQ(host.ended->event, ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL);
}

// ------------------------------------------------------------------ traffic

TEST_F(EnginePair, FramesBothWaysKeepOrderAndMoreFlags) {
    start_ready();
    a.send("a1", true);
    a.send("a2");
    a.send("a3");
    b.send("b1");
    ASSERT_TRUE(run_until(ioc, [&] { return b.received.size() == 3 && a.received.size() == 1; }));
    EXPECT_EQ(b.received, (std::vector<frame>{{"a1", true}, {"a2", false}, {"a3", false}}));
    EXPECT_EQ(a.received, (std::vector<frame>{{"b1", false}}));
}

TEST_F(EnginePair, ManySmallFramesAreBatchedIntoFewReadsAndFlushes) {
    start_ready();
    constexpr int n = 20000;
    for (int i = 0; i < n; ++i)
        a.outbox.push_back(make_msg(pattern(64, i), false));
    a.engine->restart_output();
    ASSERT_TRUE(run_until(ioc, [&] { return b.received.size() == n; }));
    for (int i = 0; i < n; ++i)
        ASSERT_EQ(b.received[static_cast<size_t>(i)].body, pattern(64, i)) << i;
    // One flush per read, many frames per read: an 8 KiB batch holds ~120 frames.
    EXPECT_LT(b.flushes, n / 20) << "frames were not batched";
    EXPECT_GT(a.returns, 0) << "no batch ever filled up";
}

// The default batches adapt (transport/batch_size.hpp): a stream of small
// frames is read in far fewer, larger reads than a static 8 KiB batch allows.
TEST_F(EnginePair, AStreamOfSmallFramesGrowsTheBatchesAStaticSizeDoesNot) {
    auto flushes_for = [&](int ceiling) {
        options_t o = options_for(ZMQ_PAIR);
        o.batch.in = o.batch.out = 8192;
        o.batch.in_ceiling = o.batch.out_ceiling = ceiling;
        int fds[2];
        socket_pair(fds);
        recording_host x, y;
        x.engine = std::make_shared<engine_t>(adopt(ioc, fds[0]), o, null_for(o), x);
        y.engine = std::make_shared<engine_t>(adopt(ioc, fds[1]), o, null_for(o), y);
        x.engine->start();
        y.engine->start();
        EXPECT_TRUE(run_until(ioc, [&] { return x.ready && y.ready; }));
        constexpr int n = 50000;
        for (int i = 0; i < n; ++i)
            x.outbox.push_back(make_msg(pattern(64, i), false));
        x.engine->restart_output();
        EXPECT_TRUE(run_until(ioc, [&] { return y.received.size() == n; }));
        for (int i = 0; i < n; i += 997)
            EXPECT_EQ(y.received[static_cast<size_t>(i)].body, pattern(64, i)) << i;
        x.engine->terminate();
        y.engine->terminate();
        ioc.restart();
        ioc.poll();
        return y.flushes;
    };
    const int static_flushes = flushes_for(8192);
    const int adaptive_flushes = flushes_for(65536);
    // 50000 x 66 bytes is 3.3 MB: >= 403 reads of 8 KiB, >= 51 of 64 KiB.
    EXPECT_GE(static_flushes, 403);
    EXPECT_LT(adaptive_flushes, static_flushes / 3)
        << "static " << static_flushes << ", adaptive " << adaptive_flushes;
}

TEST_F(EnginePair, TinyBatchesAndSizesAroundTheCopyThresholdArriveIntact) {
    options_t o = options_for(ZMQ_PAIR);
    o.batch.in = 256;
    o.batch.out = 256;
    start(o, o);
    ASSERT_TRUE(run_until(ioc, [&] { return a.ready && b.ready; }));
    std::vector<frame> sent;
    for (size_t size : {0, 1, 40, 41, 254, 255, 256, 257, 300, 511, 1023, 1024, 1025, 4000}) {
        sent.push_back({pattern(size, static_cast<int>(size)), size % 2 == 1});
        a.send(sent.back().body, sent.back().more);
    }
    ASSERT_TRUE(run_until(ioc, [&] { return b.received.size() == sent.size(); }));
    EXPECT_EQ(b.received, sent);
}

TEST_F(EngineRaw, BytesArrivingOneAtATimeAreDecoded) {
    start_null(options_for(ZMQ_PAIR));
    std::string wire = greeting_bytes() + ready_bytes("PAIR");
    std::vector<frame> sent;
    for (int i = 0; i < 20; ++i) {
        sent.push_back({pattern(static_cast<size_t>(i * 7), i), i % 3 == 0});
        wire += frame_bytes(sent.back().body, sent.back().more);
    }
    for (char c : wire) {
        write_all(peer(), std::string(1, c));
        ioc.restart();
        ioc.poll();
    }
    ASSERT_TRUE(run_until(ioc, [&] { return host.received.size() == sent.size(); }));
    EXPECT_EQ(host.received, sent);
    EXPECT_FALSE(host.ended);
}

TEST_F(EnginePair, LargeBodiesGoBothWaysIntact) {
    start_ready();
    std::vector<frame> sent;
    for (size_t size : {size_t(1) << 20, size_t(256) << 10, size_t(10), size_t(64) << 10}) {
        sent.push_back({pattern(size, static_cast<int>(size & 0xff)), false});
        a.send(sent.back().body);
        b.send(sent.back().body, true);
    }
    b.send("end");
    ASSERT_TRUE(run_until(ioc, [&] { return b.received.size() == 4 && a.received.size() == 5; }));
    EXPECT_EQ(b.received, sent);
    for (size_t i = 0; i < 4; ++i)
        EXPECT_EQ(a.received[i].body, sent[i].body) << i;
}

// Large bodies are written from the message itself (gather write).  Under a
// socket buffer of a few KiB and a transfer cap that ends writes inside
// entries, every message goes in many partial writes, each continuing at the
// first unsent byte; small frames between them and the MORE flags stay in
// place.
TEST_F(EnginePair, LargeMessagesUnderASmallSocketBufferArriveIntact) {
    for (int fd : {fds_[0], fds_[1]}) {
        int small = 4096;
        ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
        ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    }
    options_t oa = options_for(ZMQ_PAIR);
    oa.batch.max_transfer = 3001;
    start(oa, options_for(ZMQ_PAIR));
    ASSERT_TRUE(run_until(ioc, [&] { return a.ready && b.ready; }));
    std::vector<frame> sent;
    for (int i = 0; i < 6; ++i) {
        sent.push_back({pattern(i % 2 ? 7 : 300, i), true});
        sent.push_back(
            {pattern((size_t(256) << 10) + static_cast<size_t>(i), 100 + i), i % 3 == 0});
    }
    sent.push_back({"end", false});
    ASSERT_NO_FATAL_FAILURE(send_and_expect_intact(sent));
    EXPECT_FALSE(a.ended);
    EXPECT_FALSE(b.ended);
}

// With a first-write cap (tcp's default, transport/write_cap.hpp) a large
// message's first sendmsg carries only the cap, and a stream of 64 KiB
// messages has the engine look at the next frame and hand it back: every
// frame still arrives once, in order, intact, with its MORE flag.
TEST_F(EnginePair, FirstWriteCapKeepsLargeMessagesAndStreamsIntact) {
    options_t oa = options_for(ZMQ_PAIR);
    oa.batch.first_write = static_cast<int>(zlink::first_write_bytes);
    start(oa, options_for(ZMQ_PAIR));
    ASSERT_TRUE(run_until(ioc, [&] { return a.ready && b.ready; }));
    std::vector<frame> sent;
    sent.push_back({pattern(size_t(256) << 10, 1), false});  // cut: larger than the minimum batch
    for (int i = 0; i < 24; ++i)                             // cut when another waits behind it
        sent.push_back({pattern((size_t(64) << 10) + static_cast<size_t>(i), 10 + i), i % 4 == 1});
    sent.push_back({pattern(40000, 99), false});  // the last: nothing waits, goes whole
    sent.push_back({"end", false});
    ASSERT_NO_FATAL_FAILURE(send_and_expect_intact(sent));
    EXPECT_TRUE(a.outbox.empty());
    EXPECT_GT(a.returns, 0) << "no frame was looked at and handed back";
    EXPECT_FALSE(a.ended);
    EXPECT_FALSE(b.ended);
}

// Small frames are windows into the engine's receive chunk (no allocation per
// message); a window must stay intact while the engine reads on and after the
// engine and its chunk are gone.
TEST_F(EnginePair, SmallFramesAreWindowsThatOutliveLaterReadsAndTheEngine) {
    start_ready();
    b.keep = true;
    constexpr int n = 3000;
    for (int i = 0; i < n; ++i)
        a.outbox.push_back(make_msg(pattern(41 + static_cast<size_t>(i % 200), i), false));
    a.engine->restart_output();
    ASSERT_TRUE(run_until(ioc, [&] { return b.kept.size() == n; }));
    a.engine->terminate();
    b.engine->terminate();
    a.engine.reset();
    b.engine.reset();
    ioc.restart();
    ioc.poll();
    int windows = 0;
    for (int i = 0; i < n; ++i) {
        const msg_t &m = b.kept[static_cast<size_t>(i)];
        ASSERT_EQ(std::string(static_cast<const char *>(m.data()), m.size()),
                  pattern(41 + static_cast<size_t>(i % 200), i))
            << "message " << i << " was overwritten";
        windows += m.is_shared() ? 1 : 0;
    }
    EXPECT_GT(windows, n * 9 / 10) << "small frames were not windows into the receive chunk";
}

TEST_F(EnginePair, BackPressureStopsReadingAndRestartInputResumes) {
    start_ready();
    constexpr size_t n = 1000;
    b.capacity = 10;
    for (size_t i = 0; i < n; ++i)
        a.outbox.push_back(make_msg(std::to_string(i), false));
    a.engine->restart_output();
    ASSERT_TRUE(run_until(ioc, [&] { return b.received.size() == 10; }));
    run_until(ioc, [] { return false; }, std::chrono::milliseconds(100));
    EXPECT_EQ(b.received.size(), 10u) << "a full host was given more frames";
    b.capacity = SIZE_MAX;
    b.engine->restart_input();
    ASSERT_TRUE(run_until(ioc, [&] { return b.received.size() == n; }));
    for (size_t i = 0; i < n; ++i)
        ASSERT_EQ(b.received[i].body, std::to_string(i));
}

TEST_F(EnginePair, CloseAfterFlushDeliversEverythingThenCloses) {
    start_ready();
    for (int i = 0; i < 100; ++i)
        a.outbox.push_back(make_msg(pattern(500, i), false));
    a.engine->close_after_flush();
    ASSERT_TRUE(run_until(ioc, [&] { return a.ended && b.ended; }));
    EXPECT_TRUE(a.ended->requested);
    EXPECT_FALSE(b.ended->requested);
    EXPECT_TRUE(b.ended->handshake_done);
    ASSERT_EQ(b.received.size(), 100u);
    EXPECT_EQ(b.received[99].body, pattern(500, 99));
}

// ---------------------------------------------------------------- hang-ups

TEST_F(EnginePair, PeerHangUpAfterTheHandshakeEndsTheConnection) {
    start_ready();
    b.engine->terminate();
    ASSERT_TRUE(run_until(ioc, [&] { return a.ended.has_value(); }));
    EXPECT_TRUE(a.ended->handshake_done);
    EXPECT_FALSE(a.ended->requested);
    EXPECT_FALSE(b.ended) << "terminate() must not call the host";
}

TEST_F(EngineRaw, PeerHangUpDuringTheGreetingIsAHandshakeFailureWithoutDetail) {
    start_null(options_for(ZMQ_PAIR));
    write_all(peer(), greeting_bytes().substr(0, 20));
    ::shutdown(peer(), SHUT_RDWR);
    ASSERT_TRUE(run_until(ioc, [&] { return host.ended.has_value(); }));
    EXPECT_FALSE(host.ended->handshake_done);
    EXPECT_EQ(host.ended->event, 0);
}

// --------------------------------------------------------------- heartbeats

TEST_F(EnginePair, PingsKeepAQuietConnectionAlive) {
    options_t oa = options_for(ZMQ_PAIR);
    oa.liveness.heartbeat_ivl = 20;
    oa.liveness.heartbeat_timeout = 100;
    start(oa, options_for(ZMQ_PAIR));
    ASSERT_TRUE(run_until(ioc, [&] { return a.ready && b.ready; }));
    run_until(ioc, [] { return false; }, std::chrono::milliseconds(400));
    EXPECT_FALSE(a.ended) << "the peer answered every PING, yet we timed out";
    EXPECT_FALSE(b.ended);
}

TEST_F(EngineRaw, SilentPeerIsDroppedAfterTheHeartbeatTimeout) {
    options_t o = options_for(ZMQ_PAIR);
    o.liveness.heartbeat_ivl = 20;
    o.liveness.heartbeat_timeout = 100;
    start_null(o);
    write_all(peer(), greeting_bytes() + ready_bytes("PAIR"));
    ASSERT_TRUE(run_until(ioc, [&] { return host.ready.has_value(); }));
    ASSERT_TRUE(run_until(ioc, [&] { return host.ended.has_value(); }));
    EXPECT_TRUE(host.ended->handshake_done);
    EXPECT_STREQ(host.ended->reason, "heartbeat timeout");
    EXPECT_NE(read_available(peer()).find("\x04PING"), std::string::npos) << "no PING was sent";
}

// ------------------------------------------------------ mechanism hooks

TEST_F(EnginePair, FrameTransformSealsEveryOutgoingAndOpensEveryIncomingMessage) {
    options_t o = options_for(ZMQ_PAIR);
    auto ha = std::make_unique<test_handshake>(zlink::wire::handshake_options{}, true, false);
    auto hb = std::make_unique<test_handshake>(zlink::wire::handshake_options{}, true, false);
    auto *ta = &ha->transform_impl, *tb = &hb->transform_impl;
    start(o, o, std::move(ha), std::move(hb));
    ASSERT_TRUE(run_until(ioc, [&] { return a.ready && b.ready; }));
    std::vector<frame> sent = {{"one", true}, {pattern(100000, 3), false}, {"", false}};
    for (auto &f : sent)
        a.send(f.body, f.more);
    b.send("back");
    ASSERT_TRUE(run_until(ioc, [&] { return b.received.size() == 3 && a.received.size() == 1; }));
    EXPECT_EQ(b.received, sent);
    EXPECT_EQ(a.received[0].body, "back");
    EXPECT_EQ(ta->sealed, 3);
    EXPECT_EQ(tb->opened, 3);
    EXPECT_EQ(tb->sealed, 1);
    EXPECT_EQ(ta->opened, 1);
}

// A SUB's subscribe and cancel go sealed as SUBSCRIBE/CANCEL commands to a
// ZMTP 3.1 peer, which hands them to its host in message form again.
TEST_F(EnginePair, FrameTransformCarriesSubscribeAndCancelCommands) {
    auto ha = std::make_unique<test_handshake>(zlink::wire::handshake_options{}, true, false);
    auto hb = std::make_unique<test_handshake>(zlink::wire::handshake_options{}, true, false);
    auto *ta = &ha->transform_impl;
    start(options_for(ZMQ_SUB), options_for(ZMQ_PUB), std::move(ha), std::move(hb));
    ASSERT_TRUE(run_until(ioc, [&] { return a.ready && b.ready; }));
    a.send(std::string("\x01"
                       "news"));
    a.send(std::string("\x00"
                       "news",
                       5));
    ASSERT_TRUE(run_until(ioc, [&] { return b.received.size() == 2 || b.ended; }));
    EXPECT_FALSE(b.ended) << b.ended->reason;
    EXPECT_EQ(b.received, (std::vector<frame>{{std::string("\x01"
                                                           "news"),
                                               false},
                                              {std::string("\x00"
                                                           "news",
                                                           5),
                                               false}}));
    EXPECT_EQ(ta->sealed, 2);
}

// Large messages queued together are sealed into one batch, up to
// engine_output::sealed_run_bytes, before the batch is written: the peer then
// finds the next frame queued behind the one it has just read.  Seen from the
// peer's socket: while the engine pulls the run's frames nothing has arrived
// yet; the first frame beyond the run is pulled after the batch was written.
TEST_F(EngineRaw, LargeSealedMessagesShareOneBatchUpToTheRun) {
    start(options_for(ZMQ_PAIR),
          std::make_unique<test_handshake>(zlink::wire::handshake_options{}, true, false));
    write_all(peer(), greeting_bytes() + ready_bytes("PAIR"));
    ASSERT_TRUE(run_until(ioc, [&] { return host.ready.has_value(); }));
    read_available(peer());  // greeting + READY
    constexpr std::size_t size = 100 * 1024;
    const std::size_t per_run = zlink::engine_output::sealed_run_bytes / size;
    ASSERT_GE(per_run, 2u);
    const std::size_t count = per_run + 3;
    std::vector<int> queued;  // bytes waiting at the peer when each frame was pulled
    host.on_pull = [&] {
        int n = 0;
        ::ioctl(peer(), FIONREAD, &n);
        queued.push_back(n);
    };
    for (std::size_t i = 0; i < count; ++i)
        host.outbox.push_back(make_msg(pattern(size, static_cast<int>(i)), false));
    host.engine->restart_output();
    std::string got;
    ASSERT_TRUE(run_until(ioc, [&] {
        got += read_available(peer());
        return host.outbox.empty() && host.engine->output().writing() == zlink::write_state::idle &&
               got.size() >= count * size;
    }));
    ASSERT_GE(queued.size(), count);
    // The run's frames and the refused one after them were all pulled before the
    // first write; then the refused one again, with the batch on its way.
    const auto first_written =
        std::find_if(queued.begin(), queued.end(), [](int n) { return n > 0; });
    const auto pulled_before = static_cast<std::size_t>(first_written - queued.begin());
    EXPECT_GE(pulled_before, 2u) << "one large frame per batch";
    EXPECT_LE(pulled_before, per_run + 1) << "the batch grew past the run";
}

TEST_F(EngineRaw, FrameTransformPutsOnlyMessageCommandsOnTheWire) {
    start(options_for(ZMQ_PAIR),
          std::make_unique<test_handshake>(zlink::wire::handshake_options{}, true, false));
    write_all(peer(), greeting_bytes() + ready_bytes("PAIR"));
    ASSERT_TRUE(run_until(ioc, [&] { return host.ready.has_value(); }));
    std::string before = read_available(peer());  // greeting + READY
    host.send("hi");
    std::string got;
    run_until(ioc, [&] { return (got += read_available(peer())).size() >= 13; });
    std::string want = frame_bytes(std::string("\x07MESSAGE\x00", 9) + "\x32\x33", false, true);
    EXPECT_EQ(got, want);
}

TEST_F(EnginePair, ZapRequestHoldsTheHandshakeUntilTheAnswer) {
    options_t o = options_for(ZMQ_PAIR);
    start(o, o, std::make_unique<test_handshake>(zlink::wire::handshake_options{}, false, true));
    ASSERT_TRUE(run_until(ioc, [&] { return a.zap_requests == 1; }));
    run_until(ioc, [] { return false; }, std::chrono::milliseconds(100));
    EXPECT_FALSE(a.ready) << "traffic before the ZAP answer";
    EXPECT_EQ(a.zap_requests, 1);
    a.answer_zap();
    ASSERT_TRUE(run_until(ioc, [&] { return a.ready.has_value(); }));
    a.send("after zap");
    ASSERT_TRUE(run_until(ioc, [&] { return b.received.size() == 1; }));
    EXPECT_EQ(b.received[0].body, "after zap");
}

TEST_F(EnginePair, ZapAnsweredInsideTheRequestGoesOnAtOnce) {
    options_t o = options_for(ZMQ_PAIR);
    a.answer_zap_at_once = true;
    start(o, o, std::make_unique<test_handshake>(zlink::wire::handshake_options{}, false, true));
    ASSERT_TRUE(run_until(ioc, [&] { return a.ready && b.ready; }));
    EXPECT_EQ(a.zap_requests, 1);
}

// -------------------------------------------------------------- raw (STREAM)

TEST_F(EngineRaw, RawModeCarriesBytesAndAnEmptyMessageCloses) {
    options_t o = options_for(ZMQ_STREAM);
    o.role.raw_socket = true;
    start(o, nullptr);
    ASSERT_TRUE(host.ready.has_value()) << "raw connections are ready at once";
    write_all(peer(), "abc");
    ASSERT_TRUE(run_until(ioc, [&] { return host.received.size() == 1; }));
    EXPECT_EQ(host.received[0].body, "abc");
    host.send("xyz");
    host.send("");
    ASSERT_TRUE(run_until(ioc, [&] { return host.ended.has_value(); }));
    EXPECT_TRUE(host.ended->requested);
    bool eof = false;
    EXPECT_EQ(read_available(peer(), &eof), "xyz");
    EXPECT_TRUE(eof);
}
