// The two sides of an arms run, the same code in one process (two threads) and in
// two (a receiver and a sender process over the control connection):
//
//   receiving side                            sending side
//   per arm: contexts (arm's env), bind
//   hello(settings | endpoints per arm) ---->  check settings; per arm: contexts, connect
//                                       <----  hello_ok
//   per arm, in order: the handshake of bench (a->b, b->a)
//   loop: wait slice                    <----  per kind, per round, per arm in the
//         thr: receive (go, sent, thr_done        round's random order: post slice, then
//              as one bench throughput phase)     the bench phase on that arm
//         lat: echo
//   until "end"; wait finished          <----  slice "end", finished
//
// Every phase is bench's own (common/phases.hpp) on the arm's End, with the slice's
// counts, so verification and timing are bench's. Counters and callgrind marks
// bracket each slice on the side that measures it: in one process the sending side
// (its window holds the receiver's), in two processes each process its own.
#pragma once

#include "../common/link.hpp"
#include "../common/process.hpp"
#include "arms_run.hpp"

namespace bench::arms {

void run_arms_receiver(ArmsRun &run, Link &link, Watchdog &wd);
void run_arms_sender(ArmsRun &run, Link &link, Watchdog &wd);

}  // namespace bench::arms
