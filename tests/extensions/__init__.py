"""Tests of pipeline/extensions/: fine-tuning seeds and the cross-seed statistics."""
