"""Every claim evaluated: one row per claim (statistic, interval, verdict, rule) and the flat
metrics `<claim>.statistic`, `.ci_low`, `.ci_high`, `.verdict` for `dvc metrics diff`; and how
many fine-tuning seeds give each claim the primary seed's verdict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from pipeline.claims import clark, kobayashi, kovaleva, michel
from pipeline.claims.claim import Claim
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import VERDICTS

COLUMNS = ("claim", "source", "finding", "statistic", "estimate", "ci_low", "ci_high",
           "verdict", "rule")  # fmt: skip
SEED_COLUMNS = ("seed", "claim", "estimate", "ci_low", "ci_high", "verdict")


def all_claims(out: StageOutputs, tasks: Sequence[str], seed: int) -> list[Claim]:
    """The papers' testable findings for these tasks, read from the outputs of the models
    fine-tuned with `seed` (findings about the pre-trained model read the same files for
    every seed)."""
    return [
        *kovaleva.claims(tasks, seed),
        *clark.claims(tasks, seed, out),
        *michel.claims(tasks, seed),
        *kobayashi.claims(tasks, seed),
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


def by_seed(tables: Mapping[int, pd.DataFrame]) -> pd.DataFrame:
    """Every seed's table (seed -> `evaluate`'s rows) as one long table, SEED_COLUMNS."""
    return pd.concat(
        [table.assign(seed=seed)[list(SEED_COLUMNS)] for seed, table in tables.items()],
        ignore_index=True,
    )


def with_seed_agreement(primary: pd.DataFrame, seeds: pd.DataFrame) -> pd.DataFrame:
    """The primary seed's table with `seeds` (how many seeds were evaluated) and
    `seeds_same_verdict` (how many of them, the primary included, give its verdict)."""
    verdict = primary.set_index("claim")["verdict"]
    same = seeds["verdict"].to_numpy() == seeds["claim"].map(verdict).to_numpy()
    counts = (
        seeds.assign(same=same)
        .groupby("claim")
        .agg(seeds=("seed", "nunique"), seeds_same_verdict=("same", "sum"))
    )
    return primary.join(counts, on="claim")


def flat_metrics(table: pd.DataFrame) -> dict[str, float | str | int]:
    """`<claim>.statistic` / `.ci_low` / `.ci_high` / `.verdict` per claim (only the verdict
    where the statistic is undefined), the number of claims per verdict
    (`verdicts.supported`, ...), and, for a table `with_seed_agreement`, how many claims get
    the same verdict from every seed (`verdicts.same_in_every_seed`, of `verdicts.seeds`)."""
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
    metrics |= {f"verdicts.{v}": int(counts.get(v, 0)) for v in VERDICTS}
    if "seeds_same_verdict" in table:
        metrics["verdicts.seeds"] = int(table["seeds"].max())
        metrics["verdicts.same_in_every_seed"] = same_in_every_seed(table)
    return metrics


def same_in_every_seed(table: pd.DataFrame) -> int:
    """How many claims of a table `with_seed_agreement` get one verdict from every seed."""
    return int((table["seeds_same_verdict"] == table["seeds"]).sum())


def summary(table: pd.DataFrame) -> str:
    """The report's opening sentences (the table `with_seed_agreement`)."""
    counts = table["verdict"].value_counts()
    parts = ", ".join(f"{int(counts.get(v, 0))} {v}" for v in VERDICTS)
    seeds = int(table["seeds"].max())
    stable = same_in_every_seed(table)
    across = (
        f" The same verdict comes from all {seeds} fine-tuning seeds for {stable} of them."
        if seeds > 1
        else " One fine-tuning seed was run: nothing here tells whether a verdict holds for "
        "another seed (the `standard` profile runs three)."
    )
    return (
        f"{len(table)} findings of the papers tested on this run (the primary seed's models): "
        f"{parts}.{across} A verdict is `supported` when the statistic's 95% interval lies "
        "wholly on the claimed side of the threshold in its rule, `contradicted` when it lies "
        "wholly on the other side, and `inconclusive` when it straddles the threshold (the "
        "sample cannot tell)."
    )
