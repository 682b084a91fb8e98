"""Clark et al. (2019), Sec. 6, Fig. 6: heads within one layer tend to behave alike (an
extension: this project's margin, not the paper's measure)."""

from __future__ import annotations

from pipeline.analyses.clark_heads.results import ClarkHeadsMetrics
from pipeline.claims.cases import SEED, Case, interval
from pipeline.claims.claim import Claim, Scope, Source
from pipeline.claims.rules import Beyond, Estimate
from pipeline.claims.thresholds import DIRECTION

PAPER = "Clark et al. 2019"
# the config keys each claim family's measurement depends on (measurement_pins.py)
SETTINGS = {
    "extension.same_layer_heads_alike": ("dump_attention.num_examples", "clark_heads"),
}


def same_layer_heads_alike(task: str) -> Claim:
    return Claim(
        name=f"extension.same_layer_heads_alike.{task}",
        source=Source(PAPER, "Sec. 6, Fig. 6", "heads within the same layer tend to behave alike"),
        finding=f"heads of the same layer attend more alike than heads of different layers "
        f"({task} inputs, pre-trained model; this project's margin, not the paper's measure)",
        statistic="mean distance between heads of different layers - of the same layer",
        rule=Beyond(DIRECTION),
        measure=lambda out, seed: Estimate.of(
            out.read(ClarkHeadsMetrics, task, seed).same_layer_margin
        ),
        extension=True,
    )


def claims(scope: Scope) -> list[Claim]:
    return [same_layer_heads_alike(t) for t in scope.tasks]


def cases() -> list[Case]:
    name = "extension.same_layer_heads_alike.sst2"
    return [
        Case(
            name,
            "supported",
            {(ClarkHeadsMetrics, "sst2", SEED): ClarkHeadsMetrics(interval(0.05, 0.03))},
            "heads of one layer closer by 0.05 [0.02, 0.08]; pre-trained: no gate",
        ),
        Case(
            name,
            "contradicted",
            {(ClarkHeadsMetrics, "sst2", SEED): ClarkHeadsMetrics(interval(-0.05, 0.03))},
            "heads of one layer farther apart by 0.05 [0.02, 0.08]",
        ),
    ]
