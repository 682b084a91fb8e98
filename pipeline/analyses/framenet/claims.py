"""Kovaleva et al. (2019), Sec. 4.2, Fig. 3: two heads stand out on FrameNet's relations
between frame-evoking lexical units and their core frame elements."""

from __future__ import annotations

from dataclasses import replace

from pipeline.analyses.framenet.results import FramenetHeads
from pipeline.claims.cases import Case
from pipeline.claims.claim import Claim, Scope, Source
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import Beyond, Estimate, undefined
from pipeline.claims.standout import top_set_apart
from pipeline.claims.thresholds import SET_APART

PAPER = "Kovaleva et al. 2019"
FRAMENET_HEADS = 2  # Sec. 4.2: "two of the 144 heads stand out"
# the config keys each claim family's measurement depends on (measurement_pins.py)
SETTINGS = {"kovaleva.framenet_heads_stand_out": ("framenet",)}


def framenet_heads_stand_out() -> Claim:
    def measure(out: StageOutputs, seed: int) -> Estimate:
        heads = out.read(FramenetHeads)
        if len(heads) <= FRAMENET_HEADS:
            return undefined(f"the model has {len(heads)} heads: none beside the top two")
        found = top_set_apart(heads.score, heads.score_ci_low, heads.score_ci_high, FRAMENET_HEADS)
        counted = f"two of this model's {len(heads)} heads (the paper: two of bert-base's 144)"
        return replace(found, note="; ".join(n for n in (counted, found.note) if n))

    return Claim(
        name="kovaleva.framenet_heads_stand_out",
        source=Source(
            PAPER,
            "Sec. 4.2, Fig. 3",
            "two of the 144 heads stand out in attending between frame-evoking lexical units "
            "and their core frame elements",
        ),
        finding="two heads stand out on FrameNet frame-element relations: the second-best "
        "head scores clearly above the third-best (pre-trained)",
        statistic="second-best head's score / third-best's - 1; interval from every head's "
        "simultaneous (Bonferroni) interval, so it accounts for ranking the heads",
        rule=Beyond(SET_APART),
        measure=measure,
    )


def claims(scope: Scope) -> list[Claim]:
    return [framenet_heads_stand_out()]


def cases() -> list[Case]:
    name = "kovaleva.framenet_heads_stand_out"
    five = FramenetHeads.of(
        score=[0.6, 0.55, 0.2, 0.18, 0.22],
        score_ci_low=[0.58, 0.53, 0.18, 0.16, 0.2],
        score_ci_high=[0.62, 0.57, 0.22, 0.2, 0.24],
    )  # two heads 2.5 times the third, well clear of 1.25x after the widening for the ranking
    alike = FramenetHeads.of(
        score=[0.6, 0.55, 0.54, 0.18, 0.22],
        score_ci_low=[0.58, 0.53, 0.52, 0.16, 0.2],
        score_ci_high=[0.62, 0.57, 0.56, 0.2, 0.24],
    )  # the third head as good as the second
    one = FramenetHeads.of(
        score=[0.95, 0.55, 0.54, 0.18, 0.22],
        score_ci_low=[0.93, 0.53, 0.52, 0.16, 0.2],
        score_ci_high=[0.97, 0.57, 0.56, 0.2, 0.24],
    )  # one head stands out; the second scores with the third
    two = FramenetHeads.of(score=[0.6, 0.55], score_ci_low=[0.58, 0.53], score_ci_high=[0.62, 0.57])
    return [
        Case(name, "supported", {(FramenetHeads,): five}, "two heads score 2.5 times the third"),
        Case(
            name, "contradicted", {(FramenetHeads,): alike}, "the third head scores with the second"
        ),
        Case(
            name,
            "contradicted",
            {(FramenetHeads,): one},
            "the best head scores 1.8 times the third, the second with it: the claim reads "
            "the second",
        ),
        Case(name, "not testable", {(FramenetHeads,): two}, "two heads: none beside the top two"),
    ]
