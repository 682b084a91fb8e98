"""The claims table as Markdown, for the README: generated from the claims stage's outputs,
never typed by hand. `python -m pipeline.claims.prose` copies each results file into the
README between its markers; tests/test_readme_results.py fails when the README's copy
differs from the outputs."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pandas as pd

from pipeline.core.errors import PipelineError
from pipeline.core.io import write_text

# README marker name -> the results file whose text stands between the markers
RESULTS = {
    "quick-claims": Path("outputs/plots/claims/results.md"),
    "seed-coverage": Path("outputs/reference/seed_interval_coverage.md"),
}


def _number(value: float, digits: int = 3) -> str:
    return "" if pd.isna(value) else f"{value:.{digits}f}"


def _estimate(row: pd.Series) -> str:
    if pd.isna(row["estimate"]):
        return "undefined"
    return f"{row['estimate']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"


def _verdict(row: pd.Series) -> str:
    verdict = f"**{row['verdict']}**" if row["verdict"] == "contradicted" else row["verdict"]
    if row["verdict"] == "underpowered":
        needed = row["rows_needed"]
        rows = "" if pd.isna(needed) else f"; needs ~{int(needed):,} rows"
        return f"{verdict} (detects {row['detectable']:.3f}, paper {row['paper_effect']:.3f}{rows})"
    if row["verdict"] == "not testable":
        return f"{verdict} ({row['reason']})"
    return verdict


def _seeds(row: pd.Series) -> str:
    if pd.isna(row["seeds"]):
        return "pre-trained"
    return f"{int(row['seeds_same_verdict'])} of {int(row['seeds'])}"


def results_markdown(table: pd.DataFrame) -> str:
    """Counts per verdict, then one Markdown table for the papers' claims and one for the
    extensions: claim, the paper's number, this run's estimate [95% CI], verdict (with its
    reason), threshold sensitivity (verdict at half / double), seeds agreeing."""
    lines = []
    for kind, title in (("paper", "The papers' findings"), ("extension", "Extensions")):
        rows = table[table["kind"] == kind]
        counts = rows["verdict"].value_counts()
        tally = ", ".join(f"{n} {v}" for v, n in counts.items())
        lines += [
            f"{title} ({len(rows)}: {tally}):",
            "",
            "| claim | paper (bert-base) | this run [95% CI] | verdict | at half / double "
            "threshold | seeds agreeing |",
            "|---|---|---|---|---|---|",
        ]
        for _, row in rows.iterrows():
            sensitivity = (
                f"{row['verdict_half_threshold']} / {row['verdict_double_threshold']}"
                if row["threshold"] != 0 and isinstance(row["verdict_half_threshold"], str)
                else "(threshold 0)"
            )
            lines.append(
                f"| `{row['claim']}` | {_number(row['paper_number'])} | {_estimate(row)} | "
                f"{_verdict(row)} | {sensitivity} | {_seeds(row)} |"
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def marked(name: str) -> re.Pattern[str]:
    """The README block between `<!-- results:NAME -->` and `<!-- /results:NAME -->`."""
    return re.compile(rf"(<!-- results:{name} -->\n)(.*?)(<!-- /results:{name} -->)", re.S)


def readme_with_results(readme: str, root: Path) -> str:
    """`readme` with every marked block replaced by its results file under `root`."""
    for name, path in RESULTS.items():
        pattern = marked(name)
        if not pattern.search(readme):
            raise PipelineError(f"README.md has no `<!-- results:{name} -->` block; add one")
        text = (root / path).read_text()
        readme = pattern.sub(lambda m, t=text: m.group(1) + t + m.group(3), readme)
    return readme


def main(root: Path) -> None:
    readme = root / "README.md"
    write_text(readme, readme_with_results(readme.read_text(), root))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description="Copy the results files into README.md between their markers."
    )
    parser.add_argument("root", nargs="?", type=Path, default=Path.cwd(), help="the checkout")
    main(parser.parse_args().root)
    print("README.md: results blocks rewritten from", ", ".join(map(str, RESULTS.values())))
