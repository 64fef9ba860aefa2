#!/bin/bash
# Runs one bench cell again and again (a receiver and a sender process per run) to catch
# a stall: written for 2026-12-02-wakeups.md section 4 (issue 42.3).
#
#   [PRE="perf stat -x, -o /dev/null -e EVENTS"] stall_loop.sh BENCH_BIN LIBDIR SIZE COUNT \
#       PIN_SENDER PIN_RECEIVER RUNS TAG PORT
#
# BENCH_BIN: a bench_push_pull; LIBDIR: the library to load (LD_LIBRARY_PATH); PRE: a
# wrapper for both processes. A pair still running after 20 s gets its stacks (gdb) and
# socket queues written to /tmp/stall-loop/TAG/stall-N.txt and is left to run on (bench
# timeout 120 s): "slow" = it finished after that (recovered), "stall" = it timed out.
# Progress: /tmp/stall-loop/TAG/progress. Run it under chrt -i 0 beside other work.
PRE=${PRE:-}; BIN=$1; LIBDIR=$2; SIZE=$3; COUNT=$4; PS=$5; PR=$6; RUNS=$7; TAG=$8; PORT=$9
OUT=/tmp/stall-loop/$TAG; mkdir -p "$OUT"
ok=0; slow=0; stall=0; other=0
dump() {  # the bench process (under PRE: the wrapper's child)
    local p=$1 c
    c=$(pgrep -P "$p" | head -1); [ -n "$c" ] && p=$c
    gdb -p "$p" -batch -ex 'thread apply all bt' 2>&1 | grep -E '^#|^Thread' | head -150
}
for i in $(seq 1 "$RUNS"); do
    P=$((PORT + i % 50)); C=$((P + 1000))
    common="--transport tcp --size $SIZE --count $COUNT --mode thr --timeout-ms 120000 --control tcp://127.0.0.1:$C"
    LD_LIBRARY_PATH=$LIBDIR $PRE "$BIN" $common --role receiver --bind tcp://127.0.0.1:$P \
        --pin-receiver "$PR" >"$OUT/r.out" 2>"$OUT/r.err" & rp=$!
    LD_LIBRARY_PATH=$LIBDIR $PRE "$BIN" $common --role sender --connect tcp://127.0.0.1:$P \
        --pin-sender "$PS" >"$OUT/s.out" 2>"$OUT/s.err" & sp=$!
    t=0; dumped=0; start=$(date +%s.%N)
    while kill -0 $rp 2>/dev/null || kill -0 $sp 2>/dev/null; do
        sleep 0.5; t=$((t + 1))
        if [ $t -ge 40 ] && [ $dumped = 0 ]; then
            dumped=1
            { echo "=== run $i stuck at $(date -u +%T)"; ss -tni | grep -A1 ":$P\b"
              echo "--- receiver"; dump $rp; echo "--- sender"; dump $sp; } >"$OUT/stall-$i.txt" 2>&1
        fi
    done
    wait $rp; rr=$?; wait $sp; sr=$?
    dur=$(echo "$(date +%s.%N) - $start" | bc)
    if [ $rr = 0 ] && [ $sr = 0 ]; then
        if [ $dumped = 1 ]; then slow=$((slow + 1)); echo "run $i slow ${dur}s" >>"$OUT/log"; else ok=$((ok + 1)); fi
    else
        if [ $rr = 3 ] || [ $sr = 3 ]; then stall=$((stall + 1)); kind=stall; else other=$((other + 1)); kind=other; fi
        echo "run $i $kind rc $rr/$sr ${dur}s" >>"$OUT/log"
        cp "$OUT/r.err" "$OUT/r.err.$i"; cp "$OUT/s.err" "$OUT/s.err.$i"
    fi
    echo "$i ok=$ok slow=$slow stall=$stall other=$other last=${dur}s" >"$OUT/progress"
done
echo "DONE ok=$ok slow=$slow stall=$stall other=$other" >>"$OUT/progress"
