"""Toolchain: pins, fetching and verifying sources, building the registered libraries
(libzmq baselines, zlink) and the bench harness against each of them, and the
`setup`, `libs` and `test` commands."""
