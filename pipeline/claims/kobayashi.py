"""An extension, not a finding of the papers: do the [CLS]/[SEP] columns that Kovaleva et
al. (Sec. 4.4) and Clark et al. (Sec. 3) read in the attention weights survive weighting by
the value vectors' norms (the measure of Kobayashi et al. 2020)?"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.claims.claim import Claim, Source
from pipeline.claims.rules import Beyond
from pipeline.claims.thresholds import SURVIVES
from pipeline.core.layout import seed_folder


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
        measure=lambda out, seed: out.interval(
            ("measures", task, seed_folder(seed)), "special_norms_over_weights"
        ),
        finetuned=(task,),
        extension=True,
    )


def claims(tasks: Sequence[str]) -> list[Claim]:
    return [special_tokens_survive_norms(t) for t in tasks]
