// offer_record (core/core_offer.hpp): a reader's yield before sleeping, kept
// while it pays off and backed off while it does not.
#include "core/core_offer.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

// Which of the next n waits would offer: '1' offered, '.' skipped.
std::string offers(zlink::offer_record &r, int n, bool paid_off) {
    std::string seen;
    for (int i = 0; i < n; ++i) {
        const bool due = r.due();
        seen += due ? '1' : '.';
        if (due)
            r.learn(paid_off);
    }
    return seen;
}

}  // namespace

TEST(OfferRecord, OffersEveryWaitWhileTheYieldsPayOff) {
    zlink::offer_record r;
    EXPECT_EQ(offers(r, 8, true), "11111111");
}

TEST(OfferRecord, EachWastedYieldDoublesTheWaitsThatSkipIt) {
    zlink::offer_record r;
    EXPECT_EQ(offers(r, 16, false), "1.1..1....1.....");
}

TEST(OfferRecord, TheBackOffStopsAtSixtyFourWaits) {
    zlink::offer_record r;
    // Wasted 7 times, skipping 1, 2, 4, ..., 32 waits in between: 7 + 63 waits.
    offers(r, 70, false);
    const std::string skip64 = std::string(64, '.') + "1";
    EXPECT_EQ(offers(r, 130, false), skip64 + skip64);
}

TEST(OfferRecord, AYieldThatPaysOffHalvesTheBackOff) {
    zlink::offer_record r;
    EXPECT_EQ(offers(r, 11, false), "1.1..1....1");  // wasted 4 times: backoff 8
    EXPECT_EQ(offers(r, 9, true), "........1");     // 8 skipped, paid off: 8 -> 4
    EXPECT_EQ(offers(r, 3, true), "111");           // 4 -> 2 -> 1 -> 0
    EXPECT_EQ(offers(r, 3, false), "1.1");          // from 0 again: skips 1, then 2
}

TEST(OfferRecord, AfterAPaidOffYieldAWastedOneSkipsTwiceTheHalvedBackOff) {
    zlink::offer_record r;
    offers(r, 11, false);                        // backoff 8
    EXPECT_EQ(offers(r, 9, true), "........1");  // backoff 4
    EXPECT_EQ(offers(r, 1 + 8 + 1, false), "1........1");
}
