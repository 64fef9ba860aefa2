// knobs_t: an unset batch size adapts (start 8 KiB, ceiling 64 KiB); a size
// the user gives, globally or per transport, is static (ceiling = size).
#include <gtest/gtest.h>
#include <stdlib.h>

#include "core/knobs.hpp"
#include "zlink.h"

using zlink::knobs_t;
using zlink::transport_kind;

TEST(KnobsCeiling, UnsetSizesAdaptFromTheDefaultToTheCeiling) {
    knobs_t k;
    for (auto t : {transport_kind::tcp, transport_kind::ipc}) {
        EXPECT_EQ(k.in_for(t), knobs_t::default_batch);
        EXPECT_EQ(k.out_for(t), knobs_t::default_batch);
        EXPECT_EQ(k.in_ceiling_for(t), knobs_t::adaptive_ceiling);
        EXPECT_EQ(k.out_ceiling_for(t), knobs_t::adaptive_ceiling);
    }
}

TEST(KnobsCeiling, AGlobalSizeSetByTheContextIsStatic) {
    knobs_t k;
    ASSERT_EQ(k.set(ZMQ_ASIO_IN_BATCH_SIZE, 16384), 0);
    EXPECT_EQ(k.in_for(transport_kind::tcp), 16384);
    EXPECT_EQ(k.in_ceiling_for(transport_kind::tcp), 16384);
    EXPECT_EQ(k.out_ceiling_for(transport_kind::tcp), knobs_t::adaptive_ceiling)
        << "setting the in size fixed the out size too";
    ASSERT_EQ(k.set(ZMQ_ASIO_OUT_BATCH_SIZE, 8192), 0);  // the default value, given: static
    EXPECT_EQ(k.out_ceiling_for(transport_kind::ipc), 8192);
}

TEST(KnobsCeiling, APerTransportSizeIsStaticForThatTransportOnly) {
    knobs_t k;
    ASSERT_EQ(k.set(ZMQ_ASIO_OUT_BATCH_SIZE_TCP, 32768), 0);
    EXPECT_EQ(k.out_ceiling_for(transport_kind::tcp), 32768);
    EXPECT_EQ(k.out_ceiling_for(transport_kind::ipc), knobs_t::adaptive_ceiling);
    ASSERT_EQ(k.set(ZMQ_ASIO_OUT_BATCH_SIZE_TCP, -1), 0);  // unset again
    EXPECT_EQ(k.out_ceiling_for(transport_kind::tcp), knobs_t::adaptive_ceiling);
}

TEST(KnobsCeiling, ASizeFromTheEnvironmentIsStaticAndABadOneIsNot) {
    setenv("ZMQ_ASIO_IN_BATCH_SIZE", "65536", 1);
    setenv("ZMQ_ASIO_OUT_BATCH_SIZE", "lots", 1);
    testing::internal::CaptureStderr();
    knobs_t k = knobs_t::from_env();
    testing::internal::GetCapturedStderr();
    unsetenv("ZMQ_ASIO_IN_BATCH_SIZE");
    unsetenv("ZMQ_ASIO_OUT_BATCH_SIZE");
    EXPECT_EQ(k.in_for(transport_kind::tcp), 65536);
    EXPECT_EQ(k.in_ceiling_for(transport_kind::tcp), 65536);
    EXPECT_EQ(k.out_for(transport_kind::tcp), knobs_t::default_batch);
    EXPECT_EQ(k.out_ceiling_for(transport_kind::tcp), knobs_t::adaptive_ceiling);
}
