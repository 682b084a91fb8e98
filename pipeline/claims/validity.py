"""The validity gate: did a fine-tuned model learn its task?

A claim about a fine-tuned model means nothing when the model did not learn: a model at
chance "uses no heads", so removing them costs nothing. A model learned its task when, on
the dev rows of Table 1, its main metric beats both the best constant prediction (the
majority class; correlation 0 for a regression task) and the pre-trained model without
fine-tuning, each by a paired 95% interval that lies above 0.

A claim about removing or pruning heads also needs room on the rows the ablations score
(`headroom_failure`): a model barely above chance there can lose no more than its margin,
so "pruning costs under a point" would hold by default.

The cut-offs are here; what each gate reads of a run (`Learning`, `Room`) is read by the
analysis that declares it (provides.py), so the gates name no analysis.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from pipeline.claims.rules import Estimate

# what the lower 95% bound of a learned model's margin over chance, and over no fine-tuning,
# must exceed (module docstring)
LEARNED_ABOVE = 0.0
# where a failed gate sends the reader: the measured study of recipes (training rows, epochs,
# learning rate, seeds) against this gate, so a row says whether the model or the run fell short
LEARNING_CURVES = "docs/benchmarks.md#learning-curves"


@dataclass(frozen=True)
class Learning:
    """What the gate reads of one fine-tuned model on its task's dev rows (an analysis reads
    it off a run, provides.LearnedGate): its main metric, its paired margins over the best
    constant prediction and over the model without fine-tuning, and those two's scores."""

    score: Estimate
    over_chance: Estimate
    over_pretrained: Estimate
    chance: float
    pretrained: float


@dataclass(frozen=True)
class Learned:
    passed: bool
    reason: str  # why not, in words (empty when passed)


def learned(learning: Learning, task: str, seed: int) -> Learned:
    """Whether the model fine-tuned on `task` with `seed` learned it (module docstring)."""
    over_chance, over_pretrained = learning.over_chance, learning.over_pretrained
    if over_chance.ci_low > LEARNED_ABOVE and over_pretrained.ci_low > LEARNED_ABOVE:
        return Learned(True, "")
    score = learning.score
    return Learned(
        False,
        f"the {task} model (seed {seed}) did not learn {task}: dev {score.statistic:.3f} "
        f"[{score.ci_low:.3f}, {score.ci_high:.3f}], chance {learning.chance:.3f}, "
        f"no fine-tuning {learning.pretrained:.3f} (which recipes learn it: {LEARNING_CURVES})",
    )


def constant_score(metric: str, labels: pd.Series) -> float:
    """The main metric of the best constant prediction (the most frequent label) on `labels`:
    its accuracy is the majority share, its F1 that of always answering the majority label;
    a correlation or MCC of a constant is 0."""
    if metric == "accuracy":
        return float(labels.value_counts(normalize=True).max())
    if metric == "f1":
        share = float((labels == 1).mean())
        return 2 * share / (1 + share) if share >= 0.5 else 0.0
    return 0.0


@dataclass(frozen=True)
class Room:
    """What the headroom gate reads of one model on the ablation rows (an analysis reads it
    off a run, provides.Provides.room): the main metric's name, the rows, the best constant
    prediction's score on them (`constant_score`) and the unablated model's."""

    metric: str
    rows: int
    chance: float
    baseline: Estimate


def headroom_failure(room: Room, task: str, seed: int, needed: float) -> str:
    """Why the ablation rows of `task`'s model (seed `seed`) leave a removal or pruning claim
    nothing to measure ('' when they do not): the lower 95% bound of the baseline's margin
    over chance on those rows is below `needed`, the effect the claim is about."""
    baseline, chance = room.baseline, room.chance
    margin = baseline.ci_low - chance
    if margin >= needed and margin > 0:
        return ""
    return (
        f"the {task} model (seed {seed}) clears chance on the {room.rows} ablation rows by "
        f"a lower bound of {margin:+.3f} ({room.metric} {baseline.statistic:.3f} "
        f"[{baseline.ci_low:.3f}, {baseline.ci_high:.3f}], chance {chance:.3f}), less than the "
        f"{needed:.3g} this claim is about: it has too little to lose"
    )
