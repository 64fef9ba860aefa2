// first_write_cap: which batches have their first sendmsg cut, and where
// (transport/write_cap.hpp).
#include "transport/write_cap.hpp"

#include <gtest/gtest.h>

using zlink::first_write_bytes;
using zlink::first_write_cap;
using zlink::first_write_depends_on_more;
using zlink::first_write_min_batch;

namespace {
constexpr std::size_t cap = first_write_bytes;
constexpr std::size_t kib = 1024;
}  // namespace

TEST(FirstWriteCap, OffWhenTheEndpointHasNoCap) {
    EXPECT_EQ(first_write_cap(0, 256 * kib, true), 0u);
    EXPECT_EQ(first_write_cap(0, 256 * kib, false), 0u);
    EXPECT_FALSE(first_write_depends_on_more(0, 64 * kib));
}

TEST(FirstWriteCap, ABatchTheCapWouldNotCutGoesWhole) {
    EXPECT_EQ(first_write_cap(cap, 100, true), 0u);
    EXPECT_EQ(first_write_cap(cap, cap, true), 0u);
    EXPECT_FALSE(first_write_depends_on_more(cap, cap));
}

// The one-core 64 KiB round trip: a lone message is faster uncut.
TEST(FirstWriteCap, ALoneMidSizeBatchGoesWhole) {
    EXPECT_EQ(first_write_cap(cap, 64 * kib + 10, false), 0u);
    EXPECT_EQ(first_write_cap(cap, first_write_min_batch, false), 0u);
    EXPECT_TRUE(first_write_depends_on_more(cap, 64 * kib + 10));
    EXPECT_TRUE(first_write_depends_on_more(cap, first_write_min_batch));
}

// A stream: more frames wait behind the batch.
TEST(FirstWriteCap, AMidSizeBatchWithMoreWaitingIsCut) {
    EXPECT_EQ(first_write_cap(cap, 64 * kib + 10, true), cap);
    EXPECT_EQ(first_write_cap(cap, cap + 1, true), cap);
}

TEST(FirstWriteCap, ALargeBatchIsCutWhateverWaits) {
    EXPECT_EQ(first_write_cap(cap, first_write_min_batch + 1, false), cap);
    EXPECT_EQ(first_write_cap(cap, 256 * kib + 10, false), cap);
    EXPECT_EQ(first_write_cap(cap, 256 * kib + 10, true), cap);
    EXPECT_FALSE(first_write_depends_on_more(cap, first_write_min_batch + 1))
        << "the answer is known without asking the host";
}

TEST(FirstWriteCap, ASmallerEndpointCapIsUsedAsIs) {
    EXPECT_EQ(first_write_cap(8 * kib, 256 * kib, false), 8 * kib);
    EXPECT_EQ(first_write_cap(8 * kib, 20 * kib, true), 8 * kib);
}
