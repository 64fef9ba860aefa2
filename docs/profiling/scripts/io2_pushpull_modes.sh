#!/bin/bash
# Arms runs (zlink, libzmq) of free-placement PUSH_PULL ipc 64 B round trips with
# 2 IO threads, alternating --mode both (a throughput phase first, as the scorecard
# runs it) and --mode lat (round trips only).  Per run: each arm's p50.  Used by
# 2026-12-05-direct-send-tcp.md to test whether write interest left by the
# throughput phase slows zlink's round trips there.
#   docs/profiling/scripts/io2_pushpull_modes.sh [RUNS_PER_MODE] [ZLINK_ARM_SUFFIX]
N=${1:-6}; EXTRA=${2:-}
cd "$(dirname "$0")/../../.."
for i in $(seq "$N"); do
  for mode in both lat; do
    timeout 120 ./testbed arms PUSH_PULL --transport ipc --size 64 --arm z=zlink$EXTRA \
      --arm l=libzmq-4.3.5 --placement free --process-model two-process --io-threads 2 \
      --mode $mode --rounds 20 > /tmp/io2pp.json 2> /tmp/io2pp.err
    z=$(grep -A1 "^  z: zlink" /tmp/io2pp.err | grep -oE "p50 [0-9.]+ us")
    l=$(grep -A1 "^  l: libzmq" /tmp/io2pp.err | grep -oE "p50 [0-9.]+ us")
    echo "run $i mode $mode z $z l $l"
  done
done
