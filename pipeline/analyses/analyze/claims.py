"""Kovaleva et al. (2019), Sec. 4.3, Fig. 5: fine-tuning changes the last two layers'
attention most."""

from __future__ import annotations

from dataclasses import replace

from pipeline.analyses.analyze.results import AnalyzeMetrics
from pipeline.claims.cases import SEED, Case, interval, learned_results
from pipeline.claims.claim import Claim, Scope, Source
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import Beyond, Estimate, undefined
from pipeline.claims.thresholds import DIRECTION
from pipeline.core.results import Family

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


def cases() -> list[Case]:
    name = "kovaleva.last_layers_change_most.sst2"
    three = AnalyzeMetrics(Family({1: 0.9, 2: 0.8, 3: 0.7}), interval(0.1, 0.05))
    two = AnalyzeMetrics(Family({1: 0.9, 2: 0.8}), None)
    return [
        Case(
            name,
            "supported",
            {(AnalyzeMetrics, "sst2", SEED): three} | learned_results("sst2"),
            "the last two layers change least by 0.1 [0.05, 0.15] more than the others",
        ),
        Case(
            name,
            "not testable",
            {(AnalyzeMetrics, "sst2", SEED): three} | learned_results("sst2", learned=False),
            "the model did not learn its task (the validity gate)",
        ),
        Case(
            name,
            "not testable",
            {(AnalyzeMetrics, "sst2", SEED): two} | learned_results("sst2"),
            "two layers: no other layer to compare the last two with",
        ),
    ]
