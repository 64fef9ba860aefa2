#!/bin/bash
# Arms runs of one-core PAIR tcp 64 KiB (mode both, as the scorecard): zlink as is,
# zlink with every write <= one loopback segment, zlink with 32 KiB writes, libzmq.
# Prints each arm's p50 per run. Used by 2026-12-05-tcp-pacing-modes.md.
#   docs/profiling/scripts/tcp64_arms_write_sizes.sh [RUNS]
N=${1:-24}
cd "$(dirname "$0")/../../.."
for i in $(seq $N); do
  timeout 180 ./testbed arms PAIR --transport tcp --size 65536 --arm z=zlink \
     --arm mss=zlink:ZMQ_ASIO_TCP_MAX_TRANSFER=65483 --arm k32=zlink:ZMQ_ASIO_TCP_MAX_TRANSFER=32768 \
     --arm l=libzmq-4.3.5 --placement one-core --process-model two-process --mode both --rounds 30 \
     > /tmp/a4.json 2>/tmp/a4.err
  line="run $i"
  for a in z mss k32 l; do
    v=$(grep -A1 "^  $a: " /tmp/a4.err | grep -oE "p50 [0-9.]+ us" | head -1 | awk '{print $2}')
    line="$line $a=$v"
  done
  echo "$line"
done
