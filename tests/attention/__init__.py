"""Tests of pipeline/attention/: the engine, the store, dumps and measures of attention."""
