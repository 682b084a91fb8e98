"""Tests of pipeline/voita/: hard-concrete head gates."""
