"""Tests of pipeline/kovaleva/patterns/: the attention-pattern taxonomy."""
