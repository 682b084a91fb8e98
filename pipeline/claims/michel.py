"""Michel et al. (2019), "Are Sixteen Heads Really Better than One?": the pruning finding."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.claims.claim import Claim
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import Beyond, Measured
from pipeline.core.stage import seed_folder

PAPER = "Michel et al. 2019"
PRUNED = 0.4  # fraction of heads pruned by gradient importance (Michel et al.: ~40% for BERT)
SMALL_COST = 0.05  # a "small cost": the main metric drops by less than 0.05


def pruned_cost(out: StageOutputs, task: str, seed: int) -> Measured:
    """The main metric's change at the pruning-curve point nearest PRUNED, with its paired
    interval (the same rows pruned and unpruned)."""
    curve = out.table("ablate", task, seed_folder(seed), "pruning")
    point = curve.loc[(curve["fraction_pruned"] - PRUNED).abs().idxmin()]
    return Measured(
        float(point["delta"]), float(point["delta_ci_low"]), float(point["delta_ci_high"])
    )


def large_fraction_prunable(task: str, seed: int) -> Claim:
    return Claim(
        name=f"michel.prune_{round(PRUNED * 100)}_percent_small_cost.{task}",
        source=f"{PAPER}, Sec. 4, Fig. 3",
        finding=f"{PRUNED:.0%} of heads can be pruned (by importance) at a metric cost under "
        f"{SMALL_COST:g} ({task})",
        statistic=f"main-metric change with {PRUNED:.0%} of heads pruned",
        rule=Beyond(-SMALL_COST),
        measure=lambda out: pruned_cost(out, task, seed),
    )


def claims(tasks: Sequence[str], seed: int) -> list[Claim]:
    return [large_fraction_prunable(t, seed) for t in tasks]
