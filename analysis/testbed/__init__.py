"""The testbed: builds libraries, runs benchmarks and sweeps, analyses results.

Layers (one sub-package each), lowest first; a package imports only from layers below
its own (tests/test_layers.py holds the order and enforces it):
  stats/      pure statistics: verdicts, intervals, signed-rank and rank-sum tests
  records/    a run directory's files as writer and reader share them: the manifest
              (one RunManifest), results.jsonl (live journal) or results.parquet
              (a finished run, compacted), speed.jsonl, the tidy table's schema
  toolchain/  pins, baselines, the library table, bench builds, setup, ./testbed test
  bench/      one benchmark run, host ceilings
  sweep/      experiment.toml -> cells -> runs under perf -> a run directory
  results/    a run directory or published report -> compare, report, plots
  commands/   commands that join sweep and results (`./testbed run`, `./testbed store`);
              cli.py on top
"""
