"""Tests of pipeline/analyses/: the analysis packages, their registry and what it generates."""
