"""Tests of pipeline/report/: the HTML report."""
