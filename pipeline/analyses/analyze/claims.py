"""Kovaleva et al. (2019), Sec. 4.3, Fig. 5: fine-tuning changes the last two layers'
attention most."""

from __future__ import annotations

from dataclasses import replace

from pipeline.analyses.analyze.results import AnalyzeMetrics
from pipeline.claims.claim import Claim, Scope, Source
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import Beyond, Estimate, undefined
from pipeline.claims.thresholds import DIRECTION

PAPER = "Kovaleva et al. 2019"
# the config keys each claim family's measurement depends on (measurement_pins.py)
SETTINGS = {
    "kovaleva.last_layers_change_most": ("dump_attention.num_examples", "analyze.num_examples"),
}


def last_layers_change_most(task: str) -> Claim:
    def measure(out: StageOutputs, seed: int) -> Estimate:
        analyzed = out.read(AnalyzeMetrics, task, seed)
        if 3 not in analyzed.layer_cosine or analyzed.last_two_margin is None:
            return undefined("fewer than three layers: no other layers to compare with")
        layers = len(analyzed.layer_cosine)
        depth = (
            f"the last two of this model's {layers} layers ({2 / layers:.0%} of its depth; "
            "bert-base's last two are a sixth of its 12)"
        )
        return replace(Estimate.of(analyzed.last_two_margin), note=depth)

    return Claim(
        name=f"kovaleva.last_layers_change_most.{task}",
        source=Source(
            PAPER,
            "Sec. 4.3, Fig. 5",
            "fine-tuning changes the attention of the last two layers most, for every task "
            "except QQP",
        ),
        finding=f"fine-tuning changes the attention of the last two layers most ({task})",
        statistic="least change (1 - cosine) among the last two layers - most change among "
        "the others",
        rule=Beyond(DIRECTION),
        measure=measure,
        finetuned=(task,),
    )


def claims(scope: Scope) -> list[Claim]:
    return [last_layers_change_most(t) for t in scope.tasks if t != "qqp"]
