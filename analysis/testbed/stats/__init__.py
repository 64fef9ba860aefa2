"""Pure statistics: verdicts, intervals and tests on numbers. Imports nothing else from
testbed (tests/test_layers.py), so the sweep and the analysis both use it."""
