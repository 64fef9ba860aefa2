"""The testbed: builds libraries, runs benchmarks and sweeps, analyses results.

Layers (one sub-package each), in the order data flows through them:
  toolchain/  pins, baselines, the library table, bench builds, setup
  bench/      one benchmark run, host ceilings
  sweep/      experiment.toml -> cells -> runs under perf -> results.jsonl
  results/    load, import published reports, stats, compare, report, plots
"""
