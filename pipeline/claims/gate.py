"""The validity gate: did a fine-tuned model learn its task?

A claim about a fine-tuned model means nothing when the model did not learn: a model at
chance "uses no heads", so removing them costs nothing. A model learned its task when, on
the dev rows of Table 1, its main metric beats both the best constant prediction (the
majority class; correlation 0 for a regression task) and the pre-trained model without
fine-tuning, each by a paired 95% interval that lies above 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.claims.outputs import StageOutputs
from pipeline.core.stage import seed_folder


@dataclass(frozen=True)
class Learned:
    passed: bool
    reason: str  # why not, in words (empty when passed)


def learned(out: StageOutputs, task: str, seed: int) -> Learned:
    """Whether the model fine-tuned on `task` with `seed` learned it (module docstring)."""
    table1 = ("table1", seed_folder(seed))
    score = out.interval(table1, f"{task}.finetuned")
    over_chance = out.interval(table1, f"{task}.finetuned_minus_chance")
    over_pretrained = out.interval(table1, f"{task}.finetuned_minus_pretrained")
    if over_chance.ci_low > 0 and over_pretrained.ci_low > 0:
        return Learned(True, "")
    chance = out.value(table1, f"{task}.chance")
    pretrained = out.value(table1, f"{task}.pretrained")
    return Learned(
        False,
        f"the {task} model (seed {seed}) did not learn {task}: dev {score.statistic:.3f} "
        f"[{score.ci_low:.3f}, {score.ci_high:.3f}], chance {chance:.3f}, "
        f"no fine-tuning {pretrained:.3f}",
    )
