"""Every claim evaluated into one table.

Per claim: the paper's statement and number beside this run's estimate, its interval and
verdict, the rule's threshold with its reason, the verdict at half and double the
threshold, the smallest effect the sample could detect, and the per-seed verdicts. A claim
that reads fine-tuned models is evaluated on every fine-tuning seed whose models learned
their task (gate.py); with two or more such seeds its interval spans seeds and examples
(seeds.py). Pre-trained-only claims read the same files for every seed and are evaluated
once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from pipeline.claims import clark, kobayashi, kovaleva, michel
from pipeline.claims.claim import Claim
from pipeline.claims.gate import learned
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import VERDICTS, Measured, Verdict
from pipeline.claims.seeds import across_seeds
from pipeline.claims.thresholds import SENSITIVITY

COLUMNS = (
    "claim", "kind", "source", "statement", "paper_number", "paper_number_note", "finding",
    "statistic", "estimate", "ci_low", "ci_high", "seeds_used", "verdict", "reason",
    "detectable", "paper_effect", "rows_factor", "rows_needed", "threshold", "threshold_reason",
    "verdict_half_threshold", "verdict_double_threshold", "rule", "seeds", "seeds_same_verdict",
)  # fmt: skip
SEED_COLUMNS = ("seed", "claim", "estimate", "ci_low", "ci_high", "verdict", "reason")


def all_claims(out: StageOutputs, tasks: Sequence[str]) -> list[Claim]:
    """The papers' testable findings for these tasks, then the project's extensions."""
    return [
        *kovaleva.claims(tasks, out),
        *clark.claims(tasks, out),
        *michel.claims(tasks),
        *kobayashi.claims(tasks),
    ]


@dataclass(frozen=True)
class Judged:
    measured: Measured
    verdict: Verdict
    reason: str


def judge(claim: Claim, measured: Measured, reason: str = "") -> Judged:
    """The rule's verdict; `underpowered` instead of `inconclusive` when the paper's effect
    is smaller than the smallest effect this interval could detect."""
    if reason:  # a gate failed
        return Judged(measured, "not testable", reason)
    verdict = claim.rule(measured)
    if verdict == "not testable":
        return Judged(measured, verdict, measured.note)
    underpowered = claim.effect is not None and claim.effect < measured.detectable
    if verdict == "inconclusive" and underpowered:
        return Judged(
            measured,
            "underpowered",
            f"the paper's effect {claim.effect:.3g} is below the smallest effect this "
            f"sample detects ({measured.detectable:.3g} at 80% power)",
        )
    return Judged(measured, verdict, "")


def gate_failures(claim: Claim, out: StageOutputs, seed: int) -> str:
    """Why the claim cannot be tested on `seed`'s models ('' when it can)."""
    if not claim.gated:
        return ""
    failed = (learned(out, task, seed) for task in claim.finetuned)
    return "; ".join(g.reason for g in failed if not g.passed)


def evaluate(
    claims: Sequence[Claim], out: StageOutputs, seeds: Sequence[int]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The claims table (COLUMNS, one row per claim) and the per-seed table (SEED_COLUMNS)."""
    rows, seed_rows = [], []
    for claim in claims:
        evaluated = seeds if claim.finetuned else seeds[:1]
        per_seed = {s: judge(claim, claim.measure(out, s), gate_failures(claim, out, s))
                    for s in evaluated}  # fmt: skip
        seed_rows += [_seed_row(claim, s, j) for s, j in per_seed.items()]
        testable = {s: j for s, j in per_seed.items() if j.verdict != "not testable"}
        if testable:
            overall = judge(claim, across_seeds([j.measured for j in testable.values()]))
        else:  # every seed not testable: say why for the first
            overall = next(iter(per_seed.values()))
        verdicts = [j.verdict for j in per_seed.values()]
        agreeing = max(verdicts.count(v) for v in verdicts)  # seeds giving the commonest one
        rows.append(
            _row(claim, overall, testable)
            | {
                "seeds": len(verdicts) if claim.finetuned else math.nan,
                "seeds_same_verdict": agreeing if claim.finetuned else math.nan,
            }
        )
    return pd.DataFrame(rows, columns=list(COLUMNS)), pd.DataFrame(
        seed_rows, columns=list(SEED_COLUMNS)
    )


def _seed_row(claim: Claim, seed: int, judged: Judged) -> dict:
    m = judged.measured
    return {"seed": seed, "claim": claim.name, "estimate": m.statistic, "ci_low": m.ci_low,
            "ci_high": m.ci_high, "verdict": judged.verdict, "reason": judged.reason}  # fmt: skip


def _row(claim: Claim, judged: Judged, testable: dict[int, Judged]) -> dict:
    m, source, threshold = judged.measured, claim.source, claim.rule.threshold
    defined = not m.undefined and judged.verdict != "not testable"
    detectable = m.detectable if defined else math.nan
    effect = claim.effect if claim.effect is not None else math.nan
    factor = (detectable / effect) ** 2 if judged.verdict == "underpowered" else math.nan
    return {
        "claim": claim.name,
        "kind": "extension" if claim.extension else "paper",
        "source": source.cite(),
        "statement": source.statement,
        "paper_number": source.number if source.number is not None else math.nan,
        "paper_number_note": source.number_note,
        "finding": claim.finding,
        "statistic": claim.statistic,
        "estimate": m.statistic,
        "ci_low": m.ci_low,
        "ci_high": m.ci_high,
        "seeds_used": " ".join(str(s) for s in testable) if claim.finetuned else "",
        "verdict": judged.verdict,
        "reason": judged.reason,
        "detectable": detectable,
        "paper_effect": effect,
        # rows needed / rows used for the detectable effect to shrink to the paper's
        "rows_factor": factor,
        "rows_needed": math.ceil(factor * m.evidence["rows"])
        if "rows" in m.evidence and not math.isnan(factor)
        else math.nan,
        "threshold": threshold.value,
        "threshold_reason": threshold.reason,
        "verdict_half_threshold": _at(claim, m, SENSITIVITY[0]) if defined else math.nan,
        "verdict_double_threshold": _at(claim, m, SENSITIVITY[1]) if defined else math.nan,
        "rule": claim.rule.describe(),
    }


def _at(claim: Claim, measured: Measured, factor: float) -> str:
    """The interval's verdict with the threshold scaled by `factor`."""
    return claim.rule.scaled(factor)(measured)


def flat_metrics(table: pd.DataFrame) -> dict[str, float | str | int]:
    """`<claim>.statistic` / `.ci_low` / `.ci_high` / `.verdict` per claim (only the verdict
    where the statistic is undefined); per kind (`paper`, `extension`) the number of claims
    per verdict (`verdicts.paper.supported`, ...); and among the claims that read
    fine-tuned models, how many get one verdict from every seed (`seeds.same_verdict`, of
    `seeds.claims`; `seeds.count` seeds)."""
    metrics: dict[str, float | str | int] = {}
    for row in table.itertuples():
        if not pd.isna(row.estimate):
            metrics |= {
                f"{row.claim}.statistic": round(float(row.estimate), 6),
                f"{row.claim}.ci_low": round(float(row.ci_low), 6),
                f"{row.claim}.ci_high": round(float(row.ci_high), 6),
            }
        metrics[f"{row.claim}.verdict"] = row.verdict
    for kind, rows in table.groupby("kind"):
        counts = rows["verdict"].value_counts()
        metrics |= {
            f"verdicts.{kind}.{v.replace(' ', '_')}": int(counts.get(v, 0)) for v in VERDICTS
        }
    agreeing, seed_dependent, seeds = seed_agreement(table)
    metrics |= {"seeds.count": seeds, "seeds.claims": seed_dependent}
    metrics["seeds.same_verdict"] = agreeing
    return metrics


def seed_agreement(table: pd.DataFrame) -> tuple[int, int, int]:
    """(claims whose every seed gives one verdict, claims that can differ between seeds,
    seeds): only claims that read fine-tuned models can differ."""
    dependent = table.dropna(subset=["seeds"])
    same = int((dependent["seeds_same_verdict"] == dependent["seeds"]).sum())
    seeds = int(dependent["seeds"].max()) if len(dependent) else 0
    return same, len(dependent), seeds


def summary(table: pd.DataFrame) -> str:
    """The report's opening sentences."""
    papers = table[table["kind"] == "paper"]
    counts = papers["verdict"].value_counts()
    parts = ", ".join(f"{int(counts.get(v, 0))} {v}" for v in VERDICTS)
    agreeing, dependent, seeds = seed_agreement(table)
    across = (
        f" Of the {dependent} claims that read fine-tuned models (the only ones that can differ "
        f"between seeds), {agreeing} get the same verdict from all {seeds} seeds; their "
        "intervals span seeds and examples."
        if seeds > 1
        else " One fine-tuning seed was run: nothing here tells whether a verdict holds for "
        "another seed (the `standard` profile runs three)."
    )
    extensions = len(table) - len(papers)
    return (
        f"{len(papers)} findings of the papers tested on this run: {parts}.{across} "
        f"{extensions} further rows test this project's extensions and are not counted "
        "among the papers' findings. This run's model is not the papers' bert-base: its "
        "numbers stand beside the papers', not against them. A verdict is `supported` when "
        "the 95% interval lies wholly on the claimed side of the threshold, `contradicted` "
        "when it lies wholly on the other side, `inconclusive` when it straddles it, "
        "`underpowered` when it straddles it and the paper's effect is smaller than the "
        "smallest effect this sample could detect, and `not testable` when a fine-tuned "
        "model the claim reads did not learn its task."
    )
