"""Michel et al. (2019), "Are Sixteen Heads Really Better than One?": the pruning finding."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.claims.claim import Claim, Source
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import Beyond, Estimate
from pipeline.claims.thresholds import NOT_NOTICEABLE, PRUNED_FRACTION
from pipeline.claims.unchanged import changed_share_bound
from pipeline.core.layout import seed_folder

PAPER = "Michel et al. 2019"


def pruned_cost(out: StageOutputs, task: str, seed: int) -> Estimate:
    """The main metric's change at the pruning-curve point nearest PRUNED_FRACTION, with its
    paired interval (the same rows pruned and unpruned); when pruning changed no prediction
    (an interval of zero width), the interval is the bound of `unchanged`."""
    curve = out.table("ablate", task, seed_folder(seed), "pruning")
    point = curve.loc[(curve["fraction_pruned"] - PRUNED_FRACTION).abs().idxmin()]
    rows = out.value(("ablate", task, seed_folder(seed)), "num_examples")
    delta, low, high = (float(point[k]) for k in ("delta", "delta_ci_low", "delta_ci_high"))
    note = ""
    if low == high:
        bound = changed_share_bound(rows)
        low, high = delta - bound, delta + bound
        note = (
            f"pruning changed no prediction on the {rows:.0f} rows; the interval is the "
            f"Clopper-Pearson bound +-{bound:.3f}"
        )
    return Estimate(delta, low, high, note=note, evidence={"rows": rows})


def large_fraction_prunable(task: str) -> Claim:
    return Claim(
        name=f"extension.prune_{round(PRUNED_FRACTION * 100)}_percent_small_cost.{task}",
        source=Source(
            PAPER,
            "Sec. 4.2, Fig. 3b",
            "for BERT on MNLI-matched, about 40% of the heads can be pruned by importance at "
            "test time without a noticeable loss",
        ),
        finding=f"{PRUNED_FRACTION:.0%} of heads, pruned by importance, cost less than "
        f"{-NOT_NOTICEABLE.value:g} of the main metric ({task}; the paper states it for "
        "MNLI-matched only, which has no offline copy here: an extension)",
        statistic=f"main-metric change with {PRUNED_FRACTION:.0%} of heads pruned (paired)",
        rule=Beyond(NOT_NOTICEABLE),
        measure=lambda out, seed: pruned_cost(out, task, seed),
        finetuned=(task,),
        effect=-NOT_NOTICEABLE.value,
        effect_source="this project's margin: a loss under "
        f"{-NOT_NOTICEABLE.value:g} (NOT_NOTICEABLE), the paper's loss taken as about 0",
        headroom=-NOT_NOTICEABLE.value,
        extension=True,
    )


def claims(tasks: Sequence[str]) -> list[Claim]:
    return [large_fraction_prunable(t) for t in tasks]
