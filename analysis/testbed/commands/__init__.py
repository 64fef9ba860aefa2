"""Commands that join packages of one layer: they may import any package below them
(tests/test_layers.py), which the packages themselves may not."""
