"""The claims stage's blocks in the docs: each judged run's headline and claims table, the
committed tables counted by verdict, and the seed-interval and share-simulation studies the
rules rest on (pipeline/claims/prose.py)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipeline.claims.evaluate import headline_counts
from pipeline.claims.prose import MPNET_QUICK, STANDARD, Block

# the committed claims tables, by the run they judge
CLAIMS_TABLES = {
    "default run (MiniLM-L6, quick profile)": Path("outputs/plots/claims/claims.csv"),
    "standard reference (MiniLM-L6, three seeds)": STANDARD / "claims.csv",
    "MPNet run (all-mpnet-base-v2, quick profile)": MPNET_QUICK / "plots/claims/claims.csv",
}


def registry_counts(root: Path) -> str:
    """Each committed claims table's papers' findings by verdict, with the registry version
    that judged it, as a Markdown list."""
    lines = []
    for name, path in CLAIMS_TABLES.items():
        table = pd.read_csv(root / path)
        first = table.iloc[0]
        lines.append(
            f"- {name}: {(table['kind'] == 'paper').sum()} papers' findings, "
            f"{headline_counts(table)}; judged by registry version "
            f"{int(first['registry_version'])} ({first['registry_status']}, "
            f"{str(first['registry_digest'])[:12]}), {first['registration']}\n"
        )
    return "".join(lines)


CLAIMS_PAGE = Path("docs/stages/claims.md")
STATISTICS = Path("docs/statistics.md")
BLOCKS = {
    "quick-claims-summary": Block(Path("README.md"), (Path("outputs/plots/claims/summary.txt"),)),
    "quick-claims": Block(CLAIMS_PAGE, (Path("outputs/plots/claims/results.md"),)),
    "seed-coverage": Block(STATISTICS, (Path("outputs/reference/seed_interval_coverage.md"),)),
    "share-simulation": Block(STATISTICS, (Path("outputs/reference/share_simulation.md"),)),
    "standard-claims-summary": Block(CLAIMS_PAGE, (STANDARD / "summary.txt",)),
    "standard-claims": Block(CLAIMS_PAGE, (STANDARD / "results.md",)),
    "current-claims-counts": Block(
        Path("docs/comparing-runs.md"), tuple(CLAIMS_TABLES.values()), registry_counts
    ),
}
