"""Every claim evaluated: one row per claim (statistic, interval, verdict, rule) and the flat
metrics `<claim>.statistic`, `.ci_low`, `.ci_high`, `.verdict` for `dvc metrics diff`."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from pipeline.claims import clark, kobayashi, kovaleva, michel
from pipeline.claims.claim import Claim
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import VERDICTS

COLUMNS = ("claim", "source", "finding", "statistic", "estimate", "ci_low", "ci_high",
           "verdict", "rule")  # fmt: skip


def all_claims(out: StageOutputs, tasks: Sequence[str], seed: int) -> list[Claim]:
    """The papers' testable findings for these tasks, read from the primary seed's models."""
    return [
        *kovaleva.claims(tasks, seed),
        *clark.claims(tasks, out),
        *michel.claims(tasks, seed),
        *kobayashi.claims(tasks),
    ]


def evaluate(claims: Sequence[Claim], out: StageOutputs) -> pd.DataFrame:
    """One row per claim, in the given order."""
    rows = []
    for claim in claims:
        measured = claim.measure(out)
        rows.append(
            {
                "claim": claim.name,
                "source": claim.source,
                "finding": claim.finding,
                "statistic": claim.statistic,
                "estimate": measured.statistic,
                "ci_low": measured.ci_low,
                "ci_high": measured.ci_high,
                "verdict": claim.rule(measured),
                "rule": claim.rule.describe(),
            }
        )
    return pd.DataFrame(rows, columns=list(COLUMNS))


def flat_metrics(table: pd.DataFrame) -> dict[str, float | str | int]:
    """`<claim>.statistic` / `.ci_low` / `.ci_high` / `.verdict` per claim (only the verdict
    where the statistic is undefined), and the number of claims per verdict
    (`verdicts.supported`, ...)."""
    metrics: dict[str, float | str | int] = {}
    for row in table.itertuples():
        if not pd.isna(row.estimate):  # an undefined statistic keeps only its verdict
            metrics |= {
                f"{row.claim}.statistic": round(float(row.estimate), 6),
                f"{row.claim}.ci_low": round(float(row.ci_low), 6),
                f"{row.claim}.ci_high": round(float(row.ci_high), 6),
            }
        metrics[f"{row.claim}.verdict"] = row.verdict
    counts = table["verdict"].value_counts()
    return metrics | {f"verdicts.{v}": int(counts.get(v, 0)) for v in VERDICTS}


def summary(table: pd.DataFrame) -> str:
    """The report's opening sentences."""
    counts = table["verdict"].value_counts()
    parts = ", ".join(f"{int(counts.get(v, 0))} {v}" for v in VERDICTS)
    return (
        f"{len(table)} findings of the papers tested on this run: {parts}. A verdict is "
        "`supported` when the statistic's 95% interval lies wholly on the claimed side of the "
        "threshold in its rule, `contradicted` when it lies wholly on the other side, and "
        "`inconclusive` when it straddles the threshold (the sample cannot tell)."
    )
