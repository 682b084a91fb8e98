"""The claims table as Markdown (`results_markdown`), which the claims stage writes as
results.md: the registry the verdicts were judged by, then one table for the papers' findings
and one for the extensions."""

from __future__ import annotations

import pandas as pd

from pipeline.claims.evaluate import PAPERS_EFFECT
from pipeline.claims.readings import shown_with
from pipeline.claims.sensitivity import threshold_sensitivity


def _number(value: float, digits: int = 3) -> str:
    return "" if pd.isna(value) else f"{value:.{digits}f}"


def _estimate(row: pd.Series) -> str:
    if pd.isna(row["estimate"]):
        return "undefined"
    return f"{row['estimate']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"


def _effect(row: pd.Series) -> str:
    """The power check's effect and whose it is: the paper's printed number, or assumed."""
    effect = row.get("power_effect")
    if effect is None or pd.isna(effect):
        return ""
    source = str(row.get("power_effect_source"))
    whose = "paper" if source == PAPERS_EFFECT else source.split(":")[0]
    return f"{effect:.3f} ({whose})"  # paper, assumed, or this project's margin


def _verdict(row: pd.Series) -> str:
    """The verdict, with its reason where it has one and the interval's note (e.g. how many
    heads changed no prediction)."""
    verdict = f"**{row['verdict']}**" if row["verdict"] == "contradicted" else row["verdict"]
    said = [row.get(k) for k in ("reason", "note")]  # a note may be the reason itself
    said = [text for text in dict.fromkeys(said) if isinstance(text, str) and text]
    return f"{verdict} ({'; '.join(said)})" if said else verdict


def _seeds(row: pd.Series) -> str:
    if pd.isna(row["seeds"]):
        return "pre-trained"
    return f"{int(row['seeds_same_verdict'])} of {int(row['seeds'])}"


def results_markdown(table: pd.DataFrame) -> str:
    """Counts per verdict, then one Markdown table for the papers' claims and one for the
    extensions: claim, the paper's number, the effect the power check looked for (the
    paper's, or assumed: its source is in the reason), this run's estimate [95% CI], verdict
    (with its
    reason), threshold sensitivity (verdict at half / double), seeds agreeing; first, the
    claims registry the verdicts were judged by, where the table names one."""
    lines = []
    if "registry_digest" in table and len(table):
        first = table.iloc[0]
        lines += [
            f"Judged by claims registry version {int(first['registry_version'])} "
            f"({first['registry_status']}), digest `{first['registry_digest']}`: every "
            f"verdict is {first['registration']}.",
            "",
        ]
    for kind, title in (("paper", "The papers' findings"), ("extension", "Extensions")):
        counted = table[table["kind"] == kind]
        counts = counted["verdict"].value_counts()
        tally = ", ".join(f"{n} {v}" for v, n in counts.items())
        rows = shown_with(table, kind)
        lines += [
            f"{title} ({len(counted)}: {tally}; a finding read two ways is followed by its "
            "readings' rows):",
            "",
            "| claim | paper (bert-base) | effect for power | this run [95% CI] | verdict | "
            "at half / double threshold | seeds agreeing |",
            "|---|---|---|---|---|---|---|",
        ]
        for _, row in rows.iterrows():
            sensitivity = threshold_sensitivity(
                row["threshold"], row["verdict_half_threshold"], row["verdict_double_threshold"]
            )
            lines.append(
                f"| `{row['claim']}` | {_number(row['paper_number'])} | {_effect(row)} | "
                f"{_estimate(row)} | {_verdict(row)} | {sensitivity} | {_seeds(row)} |"
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
