"""Tests of pipeline/kovaleva/: Kovaleva et al.'s analyses, FrameNet and their intervals."""
