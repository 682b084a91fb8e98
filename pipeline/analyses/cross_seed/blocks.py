"""The cross-seed comparison's block in the docs: the standard reference's summary, as a list
(pipeline/claims/prose.py)."""

from __future__ import annotations

from pathlib import Path

from pipeline.claims.prose import STANDARD, Block, bullet_lines

SUMMARY = STANDARD / "cross_seed_summary.txt"
BLOCKS = {
    "standard-cross-seed": Block(Path("docs/stages/seeds.md"), (SUMMARY,), bullet_lines(SUMMARY)),
}
