"""Test suites and `./testbed test`: zlink's ctest (plain, ASan/UBSan, TSan, fuzz),
libzmq 4.3.5's own tests and pyzmq's tests on each library, the event-loop and
notebook-kernel checks, the API diff, clang-format and the analysis pytest suite.
They build on the toolchain (what to build and where it is), never the reverse."""
