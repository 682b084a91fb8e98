"""An extension, not a finding of the papers: do the [CLS]/[SEP] columns that Kovaleva et
al. (Sec. 4.4) and Clark et al. (Sec. 3) read in the attention weights survive weighting by
the value vectors' norms (the measure of Kobayashi et al. 2020)?"""

from __future__ import annotations

from pipeline.analyses.measures.results import MeasuresMetrics
from pipeline.claims.cases import SEED, Case, interval, learned_results
from pipeline.claims.claim import Claim, Scope, Source
from pipeline.claims.rules import Beyond, Estimate
from pipeline.claims.thresholds import SURVIVES

# the config keys each claim family's measurement depends on (measurement_pins.py)
SETTINGS = {"extension.special_tokens_survive_norms": ("measures",)}


def special_tokens_survive_norms(task: str) -> Claim:
    return Claim(
        name=f"extension.special_tokens_survive_norms.{task}",
        source=Source(
            "Kovaleva et al. 2019 / Clark et al. 2019",
            "Sec. 4.4 / Sec. 3",
            "much of the attention goes to [CLS] and [SEP] (read in the weights)",
        ),
        finding=f"the attention [CLS] and [SEP] receive survives norm weighting ({task}, "
        "fine-tuned)",
        statistic="[CLS]+[SEP] share under norms / under weights",
        rule=Beyond(SURVIVES),
        measure=lambda out, seed: Estimate.of(
            out.read(MeasuresMetrics, task, seed).special_norms_over_weights
        ),
        finetuned=(task,),
        extension=True,
    )


def claims(scope: Scope) -> list[Claim]:
    return [special_tokens_survive_norms(t) for t in scope.tasks]


def cases() -> list[Case]:
    name = "extension.special_tokens_survive_norms.sst2"

    def ratio(estimate: float, learned: bool = True) -> dict:
        measured = MeasuresMetrics(interval(estimate, 0.05))
        return {(MeasuresMetrics, "sst2", SEED): measured} | learned_results("sst2", learned)

    return [
        Case(
            name,
            "contradicted",
            ratio(0.25),
            "norms keep a quarter [0.2, 0.3] of the [CLS]/[SEP] share",
        ),
        Case(name, "supported", ratio(0.9), "norms keep 0.9 [0.85, 0.95] of it"),
        Case(name, "not testable", ratio(0.9, learned=False), "the model did not learn its task"),
    ]
