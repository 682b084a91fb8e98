"""Every claim evaluated into one table.

Per claim: the paper's statement and the number it prints for that quantity beside this
run's estimate, its interval and verdict, the rule's threshold with its reason, the verdict
at half and double the threshold, the smallest effect the sample could detect against the
effect the power check looks for (and where that effect comes from), and the per-seed
verdicts. A claim that reads fine-tuned models is evaluated on every fine-tuning seed whose
models learned their task (validity.py); with two or more such seeds its interval spans seeds and
examples (seeds.py), and it is `seed-dependent` when one seed supports it and another
contradicts it. Pre-trained-only claims read the same files for every seed and are
evaluated once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pandas as pd
from scipy.stats import t as student_t

from pipeline.claims import provides
from pipeline.claims.claim import Claim, Scope
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.provides import claim_modules
from pipeline.claims.readings import READING, finding_of, with_findings
from pipeline.claims.rules import VERDICTS, Estimate, Verdict, settle
from pipeline.claims.seeds import across_seeds
from pipeline.claims.thresholds import CONFIDENCE, SENSITIVITY, Z_POWER
from pipeline.claims.validity import headroom_failure, learned
from pipeline.core.errors import PipelineError

COLUMNS = (
    "claim", "kind", "source", "statement", "paper_number", "paper_number_note", "finding",
    "statistic", "estimate", "ci_low", "ci_high", "seeds_used", "verdict", "reason", "note",
    "detectable", "power_effect", "power_effect_source", "rows_factor", "rows_needed",
    "dev_rows", "decidable", "seeds_needed", "threshold", "threshold_reason",
    "verdict_half_threshold", "verdict_double_threshold", "rule", "side", "seeds",
    "seeds_same_verdict",
)  # fmt: skip
SEED_COLUMNS = ("seed", "claim", "estimate", "ci_low", "ci_high", "verdict", "reason")
PAPERS_EFFECT = "the paper's"  # power_effect_source of an effect the paper prints
MAX_SEEDS = 50  # the most fine-tuning seeds `seeds_needed` reckons with


def declared_claims(scope: Scope) -> list[Claim]:
    """Every analysis's claims for `scope` (its module's `claims(scope)`), analyses in the
    report's order (provides.claim_modules)."""
    return [claim for module in claim_modules().values() for claim in module.claims(scope)]


def scope_of(out: StageOutputs, tasks: Sequence[str]) -> Scope:
    """A run's scope: `tasks`, and the units each analysis declares that the run scored
    (provides.Unit)."""
    units = provides.lent().units
    return Scope(tuple(tasks), {unit.name: tuple(unit.found(out)) for unit in units})


def all_claims(out: StageOutputs, tasks: Sequence[str]) -> list[Claim]:
    """A run's claims: those declared for its scope (`scope_of`)."""
    return declared_claims(scope_of(out, tasks))


@dataclass(frozen=True)
class Judged:
    measured: Estimate
    verdict: Verdict
    reason: str


def effect_source(claim: Claim) -> str:
    """Where the power check's effect comes from, in words."""
    return claim.effect_source or PAPERS_EFFECT


def rows_needed(measured: Estimate, effect: float) -> float:
    """About how many rows would make the detectable effect shrink to `effect`: the rows'
    part of the half-width shrinks as 1/sqrt(rows), the seeds' part (`between_seeds`, from
    seeds.py) not at all, so when that part alone exceeds the half-width that detects
    `effect`, no number of rows does (inf). NaN where the rows are unknown."""
    rows = measured.evidence.get("rows")
    if not rows:
        return math.nan
    target = effect * measured.critical / (measured.critical + Z_POWER)  # half-width needed
    between = measured.evidence.get("between_seeds", 0.0)
    within = measured.evidence.get("within_seeds", (measured.ci_high - measured.ci_low) / 2)
    if between >= target:
        return math.inf
    return float(math.ceil(rows * within**2 / (target**2 - between**2)))


def seeds_needed(measured: Estimate, effect: float) -> float:
    """About how many fine-tuning seeds would make the detectable effect shrink to `effect`
    on these rows: the seeds' part of the half-width, t(k-1) sd / sqrt(k), with the seeds'
    sd read off `between_seeds`, shrinks with k while the rows' part stays. NaN for a
    statistic of one seed; inf when the rows' part alone is too wide, or past MAX_SEEDS."""
    k = measured.evidence.get("seeds")
    between = measured.evidence.get("between_seeds")
    if not k or k < 2 or between is None:
        return math.nan
    target = effect * measured.critical / (measured.critical + Z_POWER)
    within = measured.evidence.get("within_seeds", 0.0)
    level = 1 - (1 - CONFIDENCE) / 2
    sd = between / student_t.ppf(level, k - 1) * math.sqrt(k)
    for n in range(int(k), MAX_SEEDS + 1):
        if math.hypot(student_t.ppf(level, n - 1) * sd / math.sqrt(n), within) <= target:
            return float(n)
    return math.inf


def judge(claim: Claim, measured: Estimate, reason: str = "", dev_rows: float = math.nan) -> Judged:
    """The rule's verdict; `underpowered` instead of `inconclusive` when the effect the power
    check looks for is smaller than the smallest effect this interval could detect, with
    whether any number of the task's dev rows could decide it."""
    if reason:  # a gate failed
        return Judged(measured, "not testable", reason)
    verdict, withheld = settle(claim.rule(measured), measured)
    if verdict == "not testable":
        return Judged(measured, verdict, measured.note)
    if withheld:
        return Judged(measured, verdict, "; ".join(r for r in (withheld, measured.note) if r))
    underpowered = claim.effect is not None and claim.effect < measured.detectable
    if verdict == "inconclusive" and underpowered:
        return Judged(measured, "underpowered", _underpowered_reason(claim, measured, dev_rows))
    return Judged(measured, verdict, "")  # a decided verdict's note is the note column's


def _underpowered_reason(claim: Claim, measured: Estimate, dev_rows: float) -> str:
    effect = claim.effect if claim.effect is not None else math.nan
    reason = (
        f"the effect looked for, {effect:.3g} ({effect_source(claim)}), is below the smallest "
        f"effect this sample detects ({measured.detectable:.3g} at 80% power)"
    )
    needed = rows_needed(measured, effect)
    if math.isinf(needed):
        seeds = seeds_needed(measured, effect)
        more = (
            f"too few seeds; ~{seeds:.0f} seeds would on these rows"
            if math.isfinite(seeds)
            else f"nor would {MAX_SEEDS} seeds on these rows: it needs more seeds and more rows"
        )
        return reason + (
            "; the seeds' own spread is wider than that: no number of rows decides it "
            f"on these {measured.evidence.get('seeds', 0):.0f} seeds ({more})"
        )
    if math.isnan(needed):
        return reason
    if math.isnan(dev_rows):
        return reason + f"; needs ~{needed:,.0f} rows"
    if needed > dev_rows:
        return reason + (
            f"; needs ~{needed:,.0f} rows, the dev set has {dev_rows:,.0f}: not decidable on "
            "this task"
        )
    return reason + (
        f"; needs ~{needed:,.0f} rows of the {dev_rows:,.0f} the dev set has: decidable with "
        "more of its rows"
    )


def gate_failures(
    claim: Claim, out: StageOutputs, seed: int, lent: provides.Provides | None = None
) -> str:
    """Why the claim cannot be tested on `seed`'s models ('' when it can): a model that did
    not learn its task, or, for a removal or pruning claim, one with too little room above
    chance on the ablation rows (validity.py; what each reads of the run, `lent`: None, as
    the analyses declare it, provides.lent)."""
    if not claim.gated or not claim.finetuned:
        return ""
    lent = lent or provides.lent()
    gate = lent.learned
    if gate is None:
        raise PipelineError(
            f"claims: {claim.name} reads fine-tuned models but no analysis declares the "
            "learning gate; declare one (PROVIDES of pipeline/analyses/<name>/claims.py)"
        )
    found = (learned(gate.read(out, task, seed), task, seed) for task in claim.finetuned)
    failed = [g.reason for g in found if g.reason]
    if not failed and claim.headroom is not None:
        room = lent.room
        if room is None:
            raise PipelineError(
                f"claims: {claim.name} needs headroom but no analysis declares the headroom "
                "gate's room; declare one (PROVIDES of pipeline/analyses/<name>/claims.py)"
            )
        rooms = (headroom_failure(room(out, t, seed), t, seed, claim.headroom)
                 for t in claim.finetuned)  # fmt: skip
        failed = [reason for reason in rooms if reason]
    return "; ".join(failed)


def dev_rows(out: StageOutputs, claim: Claim, lent: provides.Provides | None = None) -> float:
    """The whole dev set of the claim's task (as the analysis that declares it reads it,
    `lent`: None, as the analyses declare it, provides.lent); NaN for a claim of no single
    task or without that count."""
    reader = (lent or provides.lent()).dev_rows
    if len(claim.finetuned) != 1 or reader is None:
        return math.nan
    return reader(out, claim.finetuned[0])


def evaluate(
    claims: Sequence[Claim], out: StageOutputs, seeds: Sequence[int]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The claims table (COLUMNS, one row per claim) and the per-seed table (SEED_COLUMNS)."""
    rows, seed_rows = [], []
    lent = provides.lent()
    for claim in claims:
        evaluated = seeds if claim.finetuned else seeds[:1]
        measured = {s: claim.measure(out, s) for s in evaluated}
        gates = {s: gate_failures(claim, out, s, lent) for s in evaluated}
        row, per_seed = evaluate_claim(claim, measured, gates, dev_rows(out, claim, lent))
        rows.append(row)
        seed_rows += per_seed
    return table_frames(claims, rows, seed_rows)


def _kind(claim: Claim) -> str:
    """`reading` for one reading of a finding (readings.py), else `extension` or `paper`."""
    return READING if claim.reading else "extension" if claim.extension else "paper"


def table_frames(
    claims: Sequence[Claim], rows: list[dict], seed_rows: list[dict]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The claims table from the claims' rows, with a row for each finding read more than
    one way before its readings' rows (readings.py), and the per-seed table."""
    kinds = {finding_of(c.name): _kind(replace(c, reading="")) for c in claims if c.reading}
    table = with_findings(pd.DataFrame(rows, columns=list(COLUMNS)), kinds)
    return table, pd.DataFrame(seed_rows, columns=list(SEED_COLUMNS))


def evaluate_claim(
    claim: Claim, measured: dict[int, Estimate], gates: dict[int, str], dev: float
) -> tuple[dict, list[dict]]:
    """One claim's row of the table and its per-seed rows, from its statistic on each seed
    and why each seed cannot be used ('' when it can)."""
    per_seed = {s: judge(claim, m, gates[s], dev) for s, m in measured.items()}
    testable = {s: j for s, j in per_seed.items() if j.verdict != "not testable"}
    overall = _overall(claim, per_seed, testable, dev)
    verdicts = [j.verdict for j in per_seed.values()]
    agreeing = max(verdicts.count(v) for v in verdicts)  # seeds giving the commonest one
    row = _row(claim, overall, testable, dev) | {
        "seeds": len(verdicts) if claim.finetuned else math.nan,
        "seeds_same_verdict": agreeing if claim.finetuned else math.nan,
    }
    return row, [_seed_row(claim, s, j) for s, j in per_seed.items()]


def _overall(
    claim: Claim, per_seed: dict[int, Judged], testable: dict[int, Judged], dev: float
) -> Judged:
    """The verdict over seeds: the pooled interval's, unless the seeds contradict each other
    (`seed-dependent`); when no seed is testable, why, naming the seeds."""
    if not testable:
        if len(per_seed) == 1:
            return next(iter(per_seed.values()))
        first_seed, first = next(iter(per_seed.items()))
        named = ", ".join(str(s) for s in per_seed)
        return Judged(
            first.measured,
            "not testable",
            f"not testable on any of seeds {named}; seed {first_seed}: {first.reason}",
        )
    try:
        combined = across_seeds([j.measured for j in testable.values()])
    except PipelineError as error:
        why = str(error).removeprefix("claims: ")
        raise PipelineError(f"claims: {claim.name}: {why}") from None
    pooled = judge(claim, combined, "", dev)
    sides = {v: [s for s, j in testable.items() if j.verdict == v]
             for v in ("supported", "contradicted")}  # fmt: skip
    if all(sides.values()):
        return Judged(
            pooled.measured,
            "seed-dependent",
            "; ".join(f"{v} on seed {', '.join(map(str, s))}" for v, s in sides.items())
            + f"; the interval over seeds says {pooled.verdict}",
        )
    return pooled


def _seed_row(claim: Claim, seed: int, judged: Judged) -> dict:
    m = judged.measured
    return {"seed": seed, "claim": claim.name, "estimate": m.statistic, "ci_low": m.ci_low,
            "ci_high": m.ci_high, "verdict": judged.verdict, "reason": judged.reason}  # fmt: skip


def _row(claim: Claim, judged: Judged, testable: dict[int, Judged], dev: float) -> dict:
    m, source, threshold = judged.measured, claim.source, claim.rule.threshold
    defined = not m.undefined and judged.verdict != "not testable"
    detectable = m.detectable if defined else math.nan
    effect = claim.effect if claim.effect is not None else math.nan
    underpowered = judged.verdict == "underpowered"
    needed = rows_needed(m, effect) if underpowered else math.nan
    rows = m.evidence.get("rows", math.nan)
    decidable = needed <= dev if underpowered and not math.isnan(dev * needed) else math.nan
    seeds = seeds_needed(m, effect) if underpowered and math.isinf(needed) else math.nan
    return {
        "claim": claim.name,
        "kind": _kind(claim),
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
        "note": m.note if defined else "",
        "detectable": detectable,
        "power_effect": effect,
        "power_effect_source": effect_source(claim) if claim.effect is not None else "",
        # rows needed / rows used for the detectable effect to shrink to the power effect
        "rows_factor": needed / rows if not math.isnan(needed * rows) else math.nan,
        "rows_needed": needed,
        "dev_rows": dev,
        "decidable": decidable,
        "seeds_needed": seeds,
        "threshold": threshold.value,
        "threshold_reason": threshold.reason,
        "verdict_half_threshold": _at(claim, m, SENSITIVITY[0]) if defined else math.nan,
        "verdict_double_threshold": _at(claim, m, SENSITIVITY[1]) if defined else math.nan,
        "rule": claim.rule.describe(),
        "side": getattr(claim.rule, "side", "above"),  # the claimed side of the threshold
    }


def _at(claim: Claim, measured: Estimate, factor: float) -> str:
    """The interval's verdict with the threshold scaled by `factor`, or `decided in advance`
    where the scaled threshold is one the statistic cannot pass (rules.Beyond.bound)."""
    scaled = claim.rule.scaled(factor)
    if scaled.decided_in_advance():
        return "decided in advance"
    return settle(scaled(measured), measured)[0]


def flat_metrics(table: pd.DataFrame) -> dict[str, float | str | int]:
    """`<claim>.statistic` / `.ci_low` / `.ci_high` / `.verdict` per claim (only the verdict
    where the statistic is undefined); per kind (`paper`, `extension`) the number of claims
    per verdict (`verdicts.paper.supported`, ...) and of underpowered ones no dev set of the
    task could decide (`verdicts.paper.not_decidable`); and among the testable claims that
    read fine-tuned models, how many get one verdict from every seed (`seeds.same_verdict`,
    of `seeds.claims`; `seeds.count` seeds)."""
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
            f"verdicts.{kind}.{v.replace(' ', '_').replace('-', '_')}": int(counts.get(v, 0))
            for v in VERDICTS
        }
        metrics[f"verdicts.{kind}.not_decidable"] = not_decidable(rows)
        metrics[f"verdicts.{kind}.too_few_seeds"] = too_few_seeds(rows)
        metrics[f"verdicts.{kind}.rows_and_seeds"] = rows_and_seeds(rows)
    agreeing, seed_dependent, seeds = seed_agreement(table)
    metrics |= {"seeds.count": seeds, "seeds.claims": seed_dependent}
    metrics["seeds.same_verdict"] = agreeing
    return metrics


VERDICT_LETTERS = dict(zip(VERDICTS, "SCIUNDR", strict=True))  # `findings`: S supported, ...


def findings(table: pd.DataFrame, profile: str, tasks: Sequence[str], seeds: Sequence[int]) -> str:
    """The papers' findings counted by verdict, with the profile, tasks and fine-tuning seeds
    they were judged on, in one short line: the claims stage's `findings` metric, a column
    of `dvc exp show` that fits a terminal (`quick 26S 1C 7I 2U 9N 0D 0R sst2,mrpc,rte,stsb
    s42`: a letter per verdict, VERDICT_LETTERS; `s` before the seeds)."""
    counts = table.loc[table["kind"] == "paper", "verdict"].value_counts()
    verdicts = " ".join(f"{counts.get(v, 0)}{letter}" for v, letter in VERDICT_LETTERS.items())
    return f"{profile} {verdicts} {','.join(tasks)} s{','.join(map(str, seeds))}"


def not_decidable(rows: pd.DataFrame) -> int:
    """Underpowered claims that more rows could decide, but more than the task's dev set
    has (not those the seeds' spread alone keeps undecided: `too_few_seeds`, `rows_and_seeds`)."""
    short = (rows["decidable"] == False) & (rows["rows_needed"] != math.inf)  # noqa: E712
    return int(short.sum())


def too_few(rows: pd.DataFrame) -> pd.Series:
    """Per row: underpowered, and the seeds' spread alone is too wide for any number of rows."""
    return (rows["verdict"] == "underpowered") & (rows["rows_needed"] == math.inf)


def seeds_alone(rows: pd.DataFrame) -> pd.Series:
    """Per row: `too_few`, and some number of seeds (up to MAX_SEEDS) on these rows would
    decide it: more seeds, not rows."""
    finite = rows["seeds_needed"].map(lambda n: not pd.isna(n) and math.isfinite(n))
    return too_few(rows) & finite


def too_few_seeds(rows: pd.DataFrame) -> int:
    """Underpowered claims that more fine-tuning seeds alone could decide."""
    return int(seeds_alone(rows).sum())


def rows_and_seeds(rows: pd.DataFrame) -> int:
    """Underpowered claims that neither more rows on these seeds nor up to MAX_SEEDS seeds on
    these rows decide: they need more of both."""
    return int((too_few(rows) & ~seeds_alone(rows)).sum())


def seed_agreement(table: pd.DataFrame) -> tuple[int, int, int]:
    """(claims whose every seed gives one verdict, claims that can differ between seeds,
    seeds): only claims that read fine-tuned models can differ, and only those testable on
    at least one seed count (a claim not testable on every seed agrees by default)."""
    finetuned = table.dropna(subset=["seeds"])
    dependent = finetuned[finetuned["verdict"] != "not testable"]
    same = int((dependent["seeds_same_verdict"] == dependent["seeds"]).sum())
    seeds = int(finetuned["seeds"].max()) if len(finetuned) else 0
    return same, len(dependent), seeds


def headline_counts(table: pd.DataFrame) -> str:
    """'29 supported, 0 contradicted, ..., 11 underpowered (2 need more rows than their
    task's dev set has, 3 need more fine-tuning seeds, not rows, 1 need more fine-tuning
    seeds and more rows), ...' for the papers' findings."""
    papers = table[table["kind"] == "paper"]
    counts = papers["verdict"].value_counts()
    parts = []
    short, seeds, both = not_decidable(papers), too_few_seeds(papers), rows_and_seeds(papers)
    for verdict in VERDICTS:
        part = f"{int(counts.get(verdict, 0))} {verdict}"
        if verdict == "underpowered" and (short or seeds or both):
            why = [f"{short} need more rows than their task's dev set has"] if short else []
            why += [f"{seeds} need more fine-tuning seeds, not rows"] if seeds else []
            why += [f"{both} need more fine-tuning seeds and more rows"] if both else []
            part += f" ({', '.join(why)})"
        parts.append(part)
    return ", ".join(parts)


def summary(table: pd.DataFrame) -> str:
    """The report's opening sentences."""
    papers = table[table["kind"] == "paper"]
    agreeing, dependent, seeds = seed_agreement(table)
    across = (
        f" Of the {dependent} claims that read fine-tuned models and are testable on at least "
        f"one seed (the only ones that can differ between seeds), {agreeing} get the same "
        f"verdict from all {seeds} seeds; their intervals span seeds and examples."
        if seeds > 1
        else " One fine-tuning seed was run: nothing here tells whether a verdict holds for "
        "another seed (the `standard` profile runs three)."
    )
    extensions = int((table["kind"] == "extension").sum())
    return (
        f"{len(papers)} findings of the papers tested on this run: {headline_counts(table)}."
        f"{across} {extensions} further rows test this project's extensions and are not "
        "counted among the papers' findings. This run's model is not the papers' bert-base: "
        "its numbers stand beside the papers', not against them. A verdict is `supported` "
        "when the 95% interval lies wholly on the claimed side of the threshold, "
        "`contradicted` when it lies wholly on the other side, `inconclusive` when it "
        "straddles it, `underpowered` when it straddles it and the effect the power check "
        "looks for (the paper's, or one marked as assumed) is smaller than the smallest "
        "effect this sample could detect, `not testable` when a fine-tuned model the claim "
        "reads did not learn its task (or has too little room above chance on the ablation "
        "rows for a removal claim), when the statistic is undefined, or when what it needs "
        "is missing (a share round the model lacks, too few arcs of a "
        "relation, too few heads; the reason says which), `seed-dependent` when "
        "one seed's model supports the claim and another's contradicts it, and "
        "`reading-dependent` when the paper's sentence admits two readings and this run "
        "supports one and contradicts the other. A finding read two ways counts once: it is "
        "decided only when its readings agree, `inconclusive` when one is decided and the "
        "other straddles its threshold; like `seed-dependent`, `reading-dependent` says more "
        "than `inconclusive` (each reading is decided) and is a finding neither for nor "
        "against the paper."
    )
