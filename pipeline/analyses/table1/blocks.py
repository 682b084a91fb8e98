"""Table 1's block in the docs: the full profile's scores beside the paper's
(pipeline/claims/prose.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pipeline.analyses.table1.claims import TABLE1
from pipeline.analyses.table1.results import Table1Scores
from pipeline.claims.prose import Block

COLUMNS = (  # (this run's field, index in TABLE1, header)
    ("pretrained", 2, "no fine-tuning"),
    ("random_init", 1, "random init + fine-tuning"),
    ("finetuned", 0, "pre-trained + fine-tuning"),
)


def table1_beside_paper(path: Path) -> Callable[[Path], str]:
    """One seed's Table 1 (a table1 metrics file) beside the paper's bert-base numbers: per
    task and column, this run's score [95% CI] and the paper's, in the paper's units (x100),
    then this run's chance score (the majority class; 0 for a correlation)."""

    def render(root: Path) -> str:
        rows = Table1Scores.read(json.loads((root / path).read_text()), str(root / path)).tasks
        header = " | ".join(f"{title}: this run [95% CI] / paper" for _, _, title in COLUMNS)
        lines = [f"| task (dev rows) | {header} | chance |", "|---|---|---|---|---|"]
        for task in sorted(rows, key=list(TABLE1).index):
            row = rows[task]
            cells = [
                f"{100 * getattr(row, name).estimate:.1f} "
                f"[{100 * getattr(row, name).low:.1f}, {100 * getattr(row, name).high:.1f}] "
                f"/ {TABLE1[task][index]:.1f}"
                for name, index, _ in COLUMNS
            ]
            cells.append(f"{round(100 * row.chance, 1) + 0.0:.1f}")  # no -0.0
            lines.append(f"| {task} ({int(row.examples):,}) | " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"

    return render


FULL = Path("outputs/reference/full/table1/seed42.json")  # the full profile's Table 1
BLOCKS = {"full-table1": Block(Path("docs/configs.md"), (FULL,), table1_beside_paper(FULL))}
