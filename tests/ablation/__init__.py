"""Tests of pipeline/ablation/: sweeps, head importance and pruning."""
