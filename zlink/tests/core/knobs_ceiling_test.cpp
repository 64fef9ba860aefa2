// knobs_t: an unset batch size adapts (start 8 KiB, ceiling 64 KiB); a size
// the user gives, globally or per transport, is static (ceiling = size).
#include <gtest/gtest.h>
#include <stdlib.h>

#include "core/knobs.hpp"
#include "zlink.h"

using zlink::knobs_t;

// Each transport names its own per-transport knob; the core resolves a size
// from a knob's option number (core/knobs.hpp).
constexpr int tcp_in = ZMQ_ASIO_IN_BATCH_SIZE_TCP, tcp_out = ZMQ_ASIO_OUT_BATCH_SIZE_TCP;
constexpr int ipc_in = ZMQ_ASIO_IN_BATCH_SIZE_IPC, ipc_out = ZMQ_ASIO_OUT_BATCH_SIZE_IPC;

TEST(KnobsCeiling, UnsetSizesAdaptFromTheDefaultToTheCeiling) {
    knobs_t k;
    for (auto [in, out] : {std::pair{tcp_in, tcp_out}, std::pair{ipc_in, ipc_out}}) {
        EXPECT_EQ(k.in_for(in), knobs_t::default_batch);
        EXPECT_EQ(k.out_for(out), knobs_t::default_batch);
        EXPECT_EQ(k.in_ceiling_for(in), knobs_t::adaptive_ceiling);
        EXPECT_EQ(k.out_ceiling_for(out), knobs_t::adaptive_ceiling);
    }
}

TEST(KnobsCeiling, AGlobalSizeSetByTheContextIsStatic) {
    knobs_t k;
    ASSERT_EQ(k.set(ZMQ_ASIO_IN_BATCH_SIZE, 16384), 0);
    EXPECT_EQ(k.in_for(tcp_in), 16384);
    EXPECT_EQ(k.in_ceiling_for(tcp_in), 16384);
    EXPECT_EQ(k.out_ceiling_for(tcp_out), knobs_t::adaptive_ceiling)
        << "setting the in size fixed the out size too";
    ASSERT_EQ(k.set(ZMQ_ASIO_OUT_BATCH_SIZE, 8192), 0);  // the default value, given: static
    EXPECT_EQ(k.out_ceiling_for(ipc_out), 8192);
}

TEST(KnobsCeiling, APerTransportSizeIsStaticForThatTransportOnly) {
    knobs_t k;
    ASSERT_EQ(k.set(ZMQ_ASIO_OUT_BATCH_SIZE_TCP, 32768), 0);
    EXPECT_EQ(k.out_ceiling_for(tcp_out), 32768);
    EXPECT_EQ(k.out_ceiling_for(ipc_out), knobs_t::adaptive_ceiling);
    ASSERT_EQ(k.set(ZMQ_ASIO_OUT_BATCH_SIZE_TCP, -1), 0);  // unset again
    EXPECT_EQ(k.out_ceiling_for(tcp_out), knobs_t::adaptive_ceiling);
}

TEST(KnobsCeiling, ASizeFromTheEnvironmentIsStaticAndABadOneIsNot) {
    setenv("ZMQ_ASIO_IN_BATCH_SIZE", "65536", 1);
    setenv("ZMQ_ASIO_OUT_BATCH_SIZE", "lots", 1);
    testing::internal::CaptureStderr();
    knobs_t k = knobs_t::from_env();
    testing::internal::GetCapturedStderr();
    unsetenv("ZMQ_ASIO_IN_BATCH_SIZE");
    unsetenv("ZMQ_ASIO_OUT_BATCH_SIZE");
    EXPECT_EQ(k.in_for(tcp_in), 65536);
    EXPECT_EQ(k.in_ceiling_for(tcp_in), 65536);
    EXPECT_EQ(k.out_for(tcp_out), knobs_t::default_batch);
    EXPECT_EQ(k.out_ceiling_for(tcp_out), knobs_t::adaptive_ceiling);
}

// The knobs a transport declares are reachable through the context option
// numbers, with the range the transport gave them (tcp's transfer cap takes 0).
TEST(KnobsCeiling, TransportDeclaredKnobsAreSetAndReadByOptionNumber) {
    knobs_t k;
    int v = 0;
    ASSERT_EQ(k.get(ZMQ_ASIO_TCP_MAX_TRANSFER, v), 0);
    EXPECT_EQ(v, 0);
    ASSERT_EQ(k.set(ZMQ_ASIO_TCP_MAX_TRANSFER, 4096), 0);
    EXPECT_EQ(k.value(ZMQ_ASIO_TCP_MAX_TRANSFER), 4096);
    EXPECT_EQ(k.set(ZMQ_ASIO_TCP_MAX_TRANSFER, 100), -1);  // below min_batch
    ASSERT_EQ(k.get(ZMQ_ASIO_IN_BATCH_SIZE_INPROC, v), 0);
    EXPECT_EQ(v, -1);
    EXPECT_EQ(k.set(ZMQ_ASIO_IN_BATCH_SIZE, -1), -1) << "only per-transport sizes reset with -1";
    EXPECT_EQ(k.set(0x5a4cff, 8192), -1) << "an option no transport declares";
}
