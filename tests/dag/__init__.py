"""Tests of pipeline/dag/: dvc.yaml from the declarations, and the stages' traced imports."""
