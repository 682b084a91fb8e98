"""The pattern classifier's block in the docs: its cross-validated summary
(pipeline/claims/prose.py)."""

from __future__ import annotations

from pathlib import Path

from pipeline.claims.prose import Block

BLOCKS = {
    "quick-patterns": Block(
        Path("docs/stages/patterns.md"), (Path("outputs/plots/patterns_train/summary.txt"),)
    ),
}
