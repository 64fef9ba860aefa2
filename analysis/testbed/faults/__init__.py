"""The faults experiments: zlink and libzmq 4.3.5 side by side under network faults.

A fault proxy (Toxiproxy, pinned and built by setup: testbed.toolchain.go_tools) sits
between the two processes of a tcp cell; a schedule adds and removes its toxics (or
kills and restarts a peer) while the fault driver (faults/, one source compiled per
library) sends numbered, checksummed messages; every message is then accounted for
(delivered, lost, duplicated, reordered, corrupted) from the two processes' record
logs, with detection and recovery times from their monitor events.

Modules: config (experiment.toml of kind "faults" / "faults-soak"), faults_table (what
each fault does to the proxy), proxy (the Toxiproxy server and its HTTP API),
driver (building and starting fault_driver), cell (one run of one cell), records and
accounting (the logs and what they add up to), timing (detection and recovery),
runner (the experiment loop), soak, verdicts, report, run_cmd (`./testbed run`).
"""
