"""Tests of pipeline/scale/: the DAG run in parallel."""
