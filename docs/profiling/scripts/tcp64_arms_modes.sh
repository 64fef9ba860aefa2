#!/bin/bash
# Arms runs (zlink, libzmq) of one-core PAIR tcp 64 KiB round trips, as the scorecard
# runs them (--mode both); per run the two arms' p50 and every data connection's
# pacing state (ss -ti) sampled while it runs. Used by 2026-12-05-tcp-pacing-modes.md,
# once per run after `sysctl -w net.ipv4.tcp_congestion_control=bbr|cubic`.
#   docs/profiling/scripts/tcp64_arms_modes.sh [RUNS] [ZLINK_ARM_SUFFIX]
N=${1:-8}; EXTRA=${2:-}
cd "$(dirname "$0")/../../.."
for i in $(seq $N); do
  timeout 120 ./testbed arms PAIR --transport tcp --size 65536 --arm z=zlink$EXTRA --arm l=libzmq-4.3.5 \
     --placement one-core --process-model two-process --mode ${MODE:-both} --rounds 30 > /tmp/am.json 2>/tmp/am.err &
  pid=$!
  : > /tmp/am-ss.txt
  while kill -0 $pid 2>/dev/null; do
    ss -tin state established > /tmp/am-ss.now 2>/dev/null
    grep -q "bytes_sent:[0-9]\{9,\}" /tmp/am-ss.now && cp /tmp/am-ss.now /tmp/am-ss.txt
    sleep 0.5
  done
  z=$(grep -A1 "^  z: zlink" /tmp/am.err | grep -oE "p50 [0-9.]+ us"); l=$(grep -A1 "^  l: libzmq" /tmp/am.err | grep -oE "p50 [0-9.]+ us")
  st=$(python3 - <<'PY'
import re
out = []
for l in open("/tmp/am-ss.txt"):
    m = re.search(r"bytes_sent:(\d+)", l)
    if m and int(m.group(1)) > 10**8:
        f = lambda k: (re.search(k + r"[: ]([^ ,)]+)", l) or [None, "-"])[1]
        rate, bw, gain = float(f("pacing_rate")[:-3]) / 8e9, float(f("[(]bw")[:-3]) / 8e9, f("pacing_gain")
        out.append(f"[pacing {rate:.1f}GB/s bw {bw:.1f}GB/s gain {gain}]")
print(" ".join(out))
PY
)
  echo "run $i z $z l $l $st"
done
