"""Voita et al. (2019), "Analyzing Multi-Head Self-Attention": the pruning finding, listed so
that the table says why this run cannot test it (the gates stage's hard-concrete head gates
score no paired change from the unpruned model)."""

from __future__ import annotations

from pipeline.claims.cases import Case
from pipeline.claims.claim import Claim, Scope, Source
from pipeline.claims.rules import Beyond, undefined
from pipeline.claims.thresholds import NOT_NOTICEABLE

PAPER = "Voita et al. 2019"
WHY_NOT = (
    "the paper pruned a translation model's encoder (BLEU); the gates stage here scores its "
    "gated classifier with the gated model's own interval (outputs/plots/gates/<task>/"
    "seed<seed>/gates.csv), not a paired interval of its change from the unpruned model on "
    "the same rows, so a small loss cannot be told from none"
)


def most_heads_prunable() -> Claim:
    return Claim(
        name="extension.most_heads_prunable",
        source=Source(
            PAPER,
            "Abstract",
            "most encoder heads can be pruned with little loss: on WMT EN-RU, pruning 38 of 48 "
            "encoder heads costs 0.15 BLEU",
        ),
        finding="gates that keep about a fifth of the heads cost less than "
        f"{-NOT_NOTICEABLE.value:g} of the main metric (the paper's is a translation "
        "model's claim: an extension on an encoder classifier)",
        statistic="main-metric change of the gated model from the unpruned one (paired)",
        rule=Beyond(NOT_NOTICEABLE),
        measure=lambda out, seed: undefined(WHY_NOT),
        extension=True,
    )


# the config keys each claim family's measurement depends on (measurement_pins.py)
SETTINGS = {"extension.most_heads_prunable": ("gates",)}


def claims(scope: Scope) -> list[Claim]:
    return [most_heads_prunable()]


def cases() -> list[Case]:
    return [
        Case(
            "extension.most_heads_prunable",
            "not testable",
            {},
            "no paired change is scored: the table says why, whatever the run holds",
        )
    ]
