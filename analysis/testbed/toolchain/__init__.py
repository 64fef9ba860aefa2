"""Toolchain: pins, fetching and verifying sources, building the registered libraries
(libzmq baselines, zlink) and the bench harness against each of them, and the
`setup` and `libs` commands. The test suites and `./testbed test` are in suites/."""
