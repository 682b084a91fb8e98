"""Kovaleva et al. (2019), "Revealing the Dark Secrets of BERT": the findings this pipeline
tests, each with its rule. Thresholds are the ones written here. Every finding about a
fine-tuned model is read from the outputs of one fine-tuning seed."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from pipeline.claims.claim import Claim
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import (
    UNDEFINED,
    Beyond,
    Measured,
    SomeSignificant,
    largest,
    smallest,
)
from pipeline.core.stage import seed_folder
from pipeline.kovaleva.patterns import CLASSES

PAPER = "Kovaleva et al. 2019"
SIMILAR_SHARES = 0.10  # shares are "similar" when no type's differs by 10 points between tasks
SPECIAL_MAJORITY = 0.5  # "the vertical pattern is attention to [CLS]/[SEP]": most vertical maps
STAND_OUT = 2.0  # a FrameNet head "stands out" at twice the median head's score


def patterns(seed: int) -> tuple[str, str]:
    """The patterns_apply metrics file of fine-tuning seed `seed`."""
    return ("patterns_apply", seed_folder(seed))


def vertical_most_frequent(task: str, condition: str, seed: int) -> Claim:
    return Claim(
        name=f"kovaleva.vertical_most_frequent.{task}.{condition}",
        source=f"{PAPER}, Sec. 4.1, Fig. 2",
        finding=f"vertical is the most frequent pattern type ({task}, {condition})",
        statistic="vertical share - the largest other type's share",
        rule=Beyond(0.0),
        measure=lambda out: out.interval(patterns(seed), f"{task}.{condition}.vertical_margin"),
    )


def shares_similar_across_tasks(tasks: Sequence[str], condition: str, seed: int) -> Claim:
    def measure(out: StageOutputs) -> Measured:
        spreads = []
        for kind in CLASSES:
            shares = [out.interval(patterns(seed), f"{t}.{condition}.{kind}") for t in tasks]
            spreads.append(spread(shares))
        return largest(*spreads)

    return Claim(
        name=f"kovaleva.shares_similar_across_tasks.{condition}",
        source=f"{PAPER}, Fig. 2",
        finding=f"pattern-type shares are similar across tasks ({condition})",
        statistic="largest spread (max - min over tasks) of one type's share; interval from "
        "the per-task intervals (conservative)",
        rule=Beyond(SIMILAR_SHARES, side="below"),
        measure=measure,
    )


def spread(shares: Sequence[Measured]) -> Measured:
    """max - min of independent estimates; the interval by interval arithmetic on their
    intervals (wider than a joint interval: it errs towards `inconclusive`)."""
    return Measured(
        max(s.statistic for s in shares) - min(s.statistic for s in shares),
        max(0.0, max(s.ci_low for s in shares) - min(s.ci_high for s in shares)),
        max(s.ci_high for s in shares) - min(s.ci_low for s in shares),
    )


def last_layers_change_most(task: str, seed: int) -> Claim:
    def measure(out: StageOutputs) -> Measured:
        analyzed = ("analyze", task, seed_folder(seed))
        if "cosine.L3" not in out.metrics(*analyzed):
            return UNDEFINED  # fewer than three layers: no "other" layers to compare with
        return out.interval(analyzed, "cosine.last_two_margin")

    return Claim(
        name=f"kovaleva.last_layers_change_most.{task}",
        source=f"{PAPER}, Fig. 5",
        finding=f"fine-tuning changes the attention of the last two layers most ({task})",
        statistic="least change (1 - cosine) among the last two layers - most change among "
        "the others",
        rule=Beyond(0.0),
        measure=measure,
    )


def table1_order(task: str, seed: int) -> Claim:
    def measure(out: StageOutputs) -> Measured:
        table1 = ("table1", seed_folder(seed))
        return smallest(
            out.interval(table1, f"{task}.finetuned_minus_random_init"),
            out.interval(table1, f"{task}.random_init_minus_pretrained"),
        )

    return Claim(
        name=f"kovaleva.table1_order.{task}",
        source=f"{PAPER}, Table 1",
        finding=f"pre-trained + fine-tuned > random init + fine-tuned > no fine-tuning ({task})",
        statistic="the smaller of the two paired metric differences",
        rule=Beyond(0.0),
        measure=measure,
    )


def removal_helps(task: str, seed: int, unit: str) -> Claim:
    """Figs. 8 (unit `heads`) and 9 (unit `layers`), from the ablation table of the model
    fine-tuned with `seed`."""

    def measure(out: StageOutputs) -> Measured:
        return best_removal(out.table("ablate", task, seed_folder(seed), unit))

    figure = "Fig. 8" if unit == "heads" else "Fig. 9"
    return Claim(
        name=f"kovaleva.{unit}_removal_helps.{task}",
        source=f"{PAPER}, {figure}",
        finding=f"removing some single {unit[:-1]} improves the task metric ({task})",
        statistic=f"the best {unit[:-1]} removal's metric change",
        rule=SomeSignificant(),
        measure=measure,
    )


def best_removal(table: pd.DataFrame, alpha: float = 0.05) -> Measured:
    """The largest metric gain of an ablation table (delta, ci_low, ci_high, q_value), with
    the count of significant gains and the highest upper bound as evidence."""
    best = table.loc[table["delta"].idxmax()]
    significant = ((table["delta"] > 0) & (table["q_value"] < alpha)).sum()
    return Measured(
        float(best["delta"]),
        float(best["ci_low"]),
        float(best["ci_high"]),
        evidence={"significant": int(significant), "max_ci_high": float(table["ci_high"].max())},
    )


def vertical_is_special_tokens(task: str, seed: int) -> Claim:
    def measure(out: StageOutputs) -> Measured:
        key = f"{task}.finetuned.vertical_on_special"
        if (
            key not in out.metrics(*patterns(seed))
            and out.value(patterns(seed), f"{task}.finetuned.vertical") == 0
        ):
            return UNDEFINED  # no map called vertical: nothing to test
        return out.interval(patterns(seed), key)

    return Claim(
        name=f"kovaleva.vertical_is_special_tokens.{task}",
        source=f"{PAPER}, Fig. 6",
        finding=f"the vertical pattern is attention to [CLS] and [SEP] ({task}, fine-tuned)",
        statistic="share of vertical maps whose strongest column is [CLS] or [SEP]",
        rule=Beyond(SPECIAL_MAJORITY),
        measure=measure,
    )


def framenet_heads_stand_out() -> Claim:
    return Claim(
        name="kovaleva.framenet_heads_stand_out",
        source=f"{PAPER}, Fig. 3",
        finding="a few heads stand out on FrameNet frame-element relations",
        statistic="best head's score / median head's score (best re-chosen per resample)",
        rule=Beyond(STAND_OUT),
        measure=lambda out: out.interval(("framenet",), "top1_over_median"),
    )


def claims(tasks: Sequence[str], seed: int) -> list[Claim]:
    conditions = ("pretrained", "finetuned")
    found = [table1_order(t, seed) for t in tasks]
    found += [vertical_most_frequent(t, c, seed) for t in tasks for c in conditions]
    if len(tasks) > 1:
        found += [shares_similar_across_tasks(tasks, c, seed) for c in conditions]
    found += [vertical_is_special_tokens(t, seed) for t in tasks]
    found += [last_layers_change_most(t, seed) for t in tasks]
    found += [removal_helps(t, seed, unit) for unit in ("heads", "layers") for t in tasks]
    found.append(framenet_heads_stand_out())
    return found
