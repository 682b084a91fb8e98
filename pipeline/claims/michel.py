"""Michel et al. (2019), "Are Sixteen Heads Really Better than One?": the pruning finding."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.claims.claim import Claim, Source
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import Beyond, Measured
from pipeline.claims.thresholds import NOT_NOTICEABLE, PRUNED_FRACTION
from pipeline.core.stage import seed_folder

PAPER = "Michel et al. 2019"


def pruned_cost(out: StageOutputs, task: str, seed: int) -> Measured:
    """The main metric's change at the pruning-curve point nearest PRUNED_FRACTION, with its
    paired interval (the same rows pruned and unpruned)."""
    curve = out.table("ablate", task, seed_folder(seed), "pruning")
    point = curve.loc[(curve["fraction_pruned"] - PRUNED_FRACTION).abs().idxmin()]
    rows = out.value(("ablate", task, seed_folder(seed)), "num_examples")
    return Measured(
        float(point["delta"]),
        float(point["delta_ci_low"]),
        float(point["delta_ci_high"]),
        evidence={"rows": rows},
    )


def large_fraction_prunable(task: str) -> Claim:
    return Claim(
        name=f"michel.prune_{round(PRUNED_FRACTION * 100)}_percent_small_cost.{task}",
        source=Source(
            PAPER,
            "Sec. 4.2, Fig. 3b",
            "40% of BERT's heads (MNLI-matched) can be pruned by importance at test time "
            "without a noticeable loss",
        ),
        finding=f"{PRUNED_FRACTION:.0%} of heads, pruned by importance, cost less than "
        f"{-NOT_NOTICEABLE.value:g} of the main metric ({task})",
        statistic=f"main-metric change with {PRUNED_FRACTION:.0%} of heads pruned (paired)",
        rule=Beyond(NOT_NOTICEABLE),
        measure=lambda out, seed: pruned_cost(out, task, seed),
        finetuned=(task,),
        effect=-NOT_NOTICEABLE.value,  # the paper's loss is ~0: the whole margin
    )


def claims(tasks: Sequence[str]) -> list[Claim]:
    return [large_fraction_prunable(t) for t in tasks]
