"""Tests of pipeline/core/: configs, schema, I/O, statistics, precision, portable kernels."""
