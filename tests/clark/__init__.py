"""Tests of pipeline/clark/: Clark et al.'s analyses."""
