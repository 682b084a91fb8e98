"""Tests of pipeline/data/: GLUE reading and seeded sampling."""
