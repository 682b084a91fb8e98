"""Kovaleva et al. (2019), Sec. 4.2, Fig. 3: two heads stand out on FrameNet's relations
between frame-evoking lexical units and their core frame elements."""

from __future__ import annotations

from dataclasses import replace

from pipeline.analyses.framenet.results import FramenetHeads
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
