#!/bin/sh
# Page faults and task-clock of the receiver and the sender process separately,
# one bench run of two processes on one CPU, each under its own perf stat.
# Written for round 5 of 2026-11-23-engine.md; per message = (run with 2N - run with N) / N.
#   faults_by_side.sh BENCH_BINARY COUNT PORT [CPU] [SIZE]
# prints: receiver_faults sender_faults receiver_task_clock_ms sender_task_clock_ms
set -eu
bench=$1; count=$2; port=$3; cpu=${4:-1}; size=${5:-262144}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
args="--transport tcp --size $size --count $count --warmup 50 --mode thr"
events=page-faults,context-switches,task-clock
taskset -c "$cpu" perf stat -x, -o "$dir/r" -e $events "$bench" $args --role receiver \
    --bind "tcp://127.0.0.1:$port" >/dev/null 2>&1 &
taskset -c "$cpu" perf stat -x, -o "$dir/s" -e $events "$bench" $args --role sender \
    --connect "tcp://127.0.0.1:$port" >/dev/null 2>&1
wait
value() { grep ",$2," "$dir/$1" | cut -d, -f1; }
echo "$(value r page-faults) $(value s page-faults) $(value r task-clock) $(value s task-clock)"
