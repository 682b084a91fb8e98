"""An extension, not a finding of the papers: do the [CLS]/[SEP] columns that Kovaleva et
al. (Sec. 4.4) and Clark et al. (Sec. 3) read in the attention weights survive weighting by
the value vectors' norms (the measure of Kobayashi et al. 2020)?"""

from __future__ import annotations

from pipeline.analyses.measures.results import MeasuresMetrics
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
