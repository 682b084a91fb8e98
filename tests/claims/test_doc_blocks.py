"""The docs' generated blocks are what the analyses declare (`BLOCKS` of each package's
blocks.py): a new analysis's block is found without an edit elsewhere, and a marker two
analyses declare fails in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.claims.prose import blocks
from pipeline.core.errors import PipelineError
from tests.support.toy_analysis import scanned, write_toy

BLOCK = """from pathlib import Path

from pipeline.claims.prose import Block

BLOCKS = {{"{marker}": Block(Path("docs/toy.md"), (Path("outputs/plots/toy/summary.txt"),))}}
"""


def test_an_analysis_s_block_is_found_by_the_scan(tmp_path):
    (write_toy(tmp_path) / "blocks.py").write_text(BLOCK.format(marker="toy-summary"))
    with scanned(tmp_path):
        found = blocks()
    assert found["toy-summary"].sources == (Path("outputs/plots/toy/summary.txt"),)
    assert "quick-measures" in found and "toy-summary" not in blocks()


def test_a_marker_two_analyses_declare_fails_in_one_line(tmp_path):
    (write_toy(tmp_path) / "blocks.py").write_text(BLOCK.format(marker="quick-measures"))
    with scanned(tmp_path), pytest.raises(PipelineError) as failed:
        blocks()
    assert str(failed.value) == (
        "doc block quick-measures is declared twice (again by analysis toy); rename one"
    )
