"""Tests of pipeline/claims/: rules, verdicts, the registry and its coverage."""
