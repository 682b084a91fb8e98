"""The comparison across models' block in the docs: its summary (pipeline/claims/prose.py)."""

from __future__ import annotations

from pathlib import Path

from pipeline.claims.prose import Block

BLOCKS = {
    "quick-across-models": Block(
        Path("docs/comparing-runs.md"), (Path("outputs/plots/across_models/summary.txt"),)
    ),
}
