"""Slow, obvious reference implementations that tests and benchmarks compare the pipeline to."""
