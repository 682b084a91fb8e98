"""Tests of pipeline/models/: loading, fine-tuning, checkpoints and resume, the CUDA path."""
