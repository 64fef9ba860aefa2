// batch_size: the adaptive read/write size rule (transport/batch_size.hpp).
#include "transport/batch_size.hpp"

#include <gtest/gtest.h>

using zlink::batch_size;

TEST(BatchSize, FullBatchesOfSmallFramesDoubleItUpToTheCeiling) {
    batch_size b(8192, 65536);
    EXPECT_EQ(b.now(), 8192u);
    b.observe(8192, 32, true);
    EXPECT_EQ(b.now(), 16384u);
    b.observe(16384, 64, true);
    b.observe(32768, 128, true);
    EXPECT_EQ(b.now(), 65536u);
    b.observe(65536, 256, true);
    EXPECT_EQ(b.now(), 65536u) << "grew past the ceiling";
}

TEST(BatchSize, FullBatchesOfFewLargeFramesKeepIt) {
    batch_size b(8192, 65536);
    for (int i = 0; i < 20; ++i)
        b.observe(8192, batch_size::small_frames - 1, true);  // a large body's first bytes
    EXPECT_EQ(b.now(), 8192u);
}

TEST(BatchSize, ItHalvesOnlyAfterARunOfLightBatchesAndNeverBelowTheFloor) {
    batch_size b(8192, 65536);
    for (int i = 0; i < 3; ++i)
        b.observe(b.now(), 100, true);
    ASSERT_EQ(b.now(), 65536u);
    for (int i = 0; i < batch_size::shrink_after - 1; ++i)
        b.observe(100, 1, false);
    EXPECT_EQ(b.now(), 65536u) << "shrank before shrink_after light batches";
    b.observe(65536 / 2, 1, false);  // a batch half used breaks the run
    for (int i = 0; i < batch_size::shrink_after - 1; ++i)
        b.observe(100, 1, false);
    EXPECT_EQ(b.now(), 65536u) << "the run of light batches was not reset";
    b.observe(100, 1, false);
    EXPECT_EQ(b.now(), 32768u);
    for (int i = 0; i < 10 * batch_size::shrink_after; ++i)
        b.observe(0, 0, false);
    EXPECT_EQ(b.now(), 8192u);
}

TEST(BatchSize, EqualFloorAndCeilingIsStatic) {
    batch_size b(16384, 16384);
    b.observe(16384, 100, true);
    EXPECT_EQ(b.now(), 16384u);
    for (int i = 0; i < 10 * batch_size::shrink_after; ++i)
        b.observe(0, 0, false);
    EXPECT_EQ(b.now(), 16384u);
    batch_size below(16384, 256);  // a ceiling under the floor is the floor
    below.observe(16384, 100, true);
    EXPECT_EQ(below.now(), 16384u);
}

TEST(BatchSize, AWriteBatchStartsAtTheCeilingAndStillShrinksWhenLight) {
    batch_size b(8192, 65536, batch_size::start::at_ceiling);
    EXPECT_EQ(b.now(), 65536u);
    for (int i = 0; i < batch_size::shrink_after; ++i)
        b.observe(100, 1, false);
    EXPECT_EQ(b.now(), 32768u);
    batch_size fixed(16384, 16384, batch_size::start::at_ceiling);  // a knob: static
    EXPECT_EQ(fixed.now(), 16384u);
}
