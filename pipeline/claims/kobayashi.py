"""Kobayashi et al. (2020), "Attention is Not Only a Weight": do the [CLS]/[SEP] columns that
Kovaleva et al. and Clark et al. read in the weights survive weighting by the value norms?"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.claims.claim import Claim
from pipeline.claims.rules import Beyond
from pipeline.core.stage import seed_folder

PAPER = "Kovaleva et al. 2019 Fig. 6, Clark et al. 2019 Sec. 3; tested as Kobayashi et al. 2020"
SURVIVES = 0.5  # "survives": keeps at least half of its share of the attention under norms


def special_tokens_survive_norms(task: str, seed: int) -> Claim:
    return Claim(
        name=f"kobayashi.special_tokens_survive_norms.{task}",
        source=PAPER,
        finding=f"the attention [CLS] and [SEP] receive survives norm weighting ({task})",
        statistic="[CLS]+[SEP] share under norms / under weights",
        rule=Beyond(SURVIVES),
        measure=lambda out: out.interval(
            ("measures", task, seed_folder(seed)), "special_norms_over_weights"
        ),
    )


def claims(tasks: Sequence[str], seed: int) -> list[Claim]:
    return [special_tokens_survive_norms(t, seed) for t in tasks]
