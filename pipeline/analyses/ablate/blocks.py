"""The ablation's block in the docs: the standard reference's removal and pruning rows
(pipeline/claims/prose.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from pipeline.claims.prose import STANDARD, Block

REMOVAL_FAMILIES = (
    "heads_removal_helps", "layers_removal_helps", "random_head_removal_helps",
    "prune_40_percent_small_cost", "most_heads_prunable",
)  # fmt: skip


def removal_rows(path: Path) -> Callable[[Path], str]:
    """Every removal and pruning row of a claims table, paper rows first: its kind and
    verdict, as a Markdown list."""

    def render(root: Path) -> str:
        table = pd.read_csv(root / path)
        removal = table[table["claim"].str.split(".").str[1].isin(REMOVAL_FAMILIES)]
        removal = removal.sort_values("kind", key=lambda k: k.ne("paper"), kind="stable")
        return "".join(f"- `{r.claim}` ({r.kind}): {r.verdict}\n" for r in removal.itertuples())

    return render


CLAIMS = STANDARD / "claims.csv"
BLOCKS = {
    "standard-removal-rows": Block(Path("docs/stages/claims.md"), (CLAIMS,), removal_rows(CLAIMS)),
}
