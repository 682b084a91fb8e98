"""Clark et al. (2019) on where heads attend: over half of the middle layers' attention goes
to [SEP] (Sec. 3, Fig. 2), and heads within one layer tend to behave alike (Sec. 6, Fig. 6;
an extension: this project's margin, not the paper's measure)."""

from __future__ import annotations

from dataclasses import replace

from pipeline.analyses.clark_heads.results import ClarkHeadsMetrics
from pipeline.claims.cases import SEED, Case, interval
from pipeline.claims.claim import Claim, Scope, Source
from pipeline.claims.rules import Beyond, Estimate, smallest, undefined
from pipeline.claims.thresholds import DIRECTION, Threshold
from pipeline.core.results import Family

PAPER = "Clark et al. 2019"
# the config keys each claim family's measurement depends on (measurement_pins.py)
SETTINGS = {
    "clark.sep_in_middle_layers": ("dump_attention.num_examples", "clark_heads"),
    "extension.same_layer_heads_alike": ("dump_attention.num_examples", "clark_heads"),
}

OVER_HALF = Threshold(
    0.5, "'over half of BERT's attention' (Clark et al. Sec. 3): more than half", from_paper=True
)
PAPER_MIDDLE = (6, 10)  # the paper's middle layers, counted from 1 ...
PAPER_DEPTH = 12  # ... of bert-base's 12


def middle_layers(depth: int) -> range:
    """The layers (from 1) of a `depth`-layer model that stand where layers 6-10 of
    bert-base's 12 do: each end scaled by depth / 12 and rounded, at least layer 1
    (6 layers: 3-5; 24 layers: 12-20)."""
    first, last = (max(1, round(n * depth / PAPER_DEPTH)) for n in PAPER_MIDDLE)
    return range(first, last + 1)


def sep_in_middle_layers(task: str) -> Claim:
    """Every middle layer must clear one half, so the statistic is the smallest of their
    intervals (rules.smallest): supported when each layer's interval lies above 0.5,
    contradicted when any lies below. The paper's "over half" is a bound it states, not an
    estimate it prints, so no paper number stands beside the claim and none sets a power
    check."""

    def measure(out, seed: int) -> Estimate:
        layers = out.read(ClarkHeadsMetrics, task, seed).sep_attention
        if not layers:
            return undefined(
                "the clark_heads results hold no attention to [SEP] per layer; re-run "
                "`dvc repro clark_heads` with the current code"
            )
        middle = middle_layers(len(layers))
        weakest = smallest(*(Estimate.of(layers[n]) for n in middle))
        return replace(weakest, note=f"layers {middle[0]}-{middle[-1]} of {len(layers)}")

    return Claim(
        name=f"clark.sep_in_middle_layers.{task}",
        source=Source(
            PAPER,
            "Sec. 3, Fig. 2",
            "in the middle layers (6-10 of bert-base's 12), over half of the attention goes "
            "to [SEP]",
            number_note="a bound ('over half'), not an estimate: Fig. 2 plots each layer's "
            "average and the paper prints no value (1000 Wikipedia segments)",
        ),
        finding=f"each middle layer gives over half of its attention to [SEP] ({task} inputs, "
        "pre-trained model; the middle layers are 6-10 of 12 scaled to the model's depth)",
        statistic="the smallest middle layer's attention to [SEP] (its heads' mean over the "
        "examples; interval over examples)",
        rule=Beyond(OVER_HALF),
        measure=measure,
    )


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
    return [
        *(sep_in_middle_layers(t) for t in scope.tasks),
        *(same_layer_heads_alike(t) for t in scope.tasks),
    ]


def _heads(sep_by_layer: list[float], margin: float = 0.05) -> dict[tuple, ClarkHeadsMetrics]:
    """SST-2's clark_heads results: each layer's attention to [SEP] (+-0.05, layers from 1)
    and the same-layer margin (+-0.03)."""
    layers = Family({n: interval(v, 0.05) for n, v in enumerate(sep_by_layer, start=1)})
    metrics = ClarkHeadsMetrics(interval(margin, 0.03), layers)
    return {(ClarkHeadsMetrics, "sst2", SEED): metrics}


def cases() -> list[Case]:
    sep = "clark.sep_in_middle_layers.sst2"
    name = "extension.same_layer_heads_alike.sst2"
    return [
        Case(
            sep,
            "supported",
            _heads([0.1, 0.2, 0.6, 0.7, 0.6, 0.1]),
            "6 layers: the middle ones (3-5) give 0.6-0.7 [+-0.05] to [SEP]; the outer ones "
            "little, which the claim does not read",
        ),
        Case(
            sep,
            "contradicted",
            _heads([0.9, 0.9, 0.6, 0.3, 0.6, 0.9]),
            "layer 4 of 6 gives 0.3 [0.25, 0.35] to [SEP]: one middle layer below one half",
        ),
        Case(
            sep,
            "contradicted",
            _heads([0.9, 0.9, 0.7, 0.7, 0.3, 0.9]),
            "layer 5 of 6, the last middle one, gives 0.3 [0.25, 0.35] to [SEP]: the centre "
            "layer's 0.7 alone would support it, every middle layer's smallest does not",
        ),
        Case(
            sep,
            "inconclusive",
            _heads([0.1, 0.2, 0.6, 0.52, 0.6, 0.1]),
            "layer 4 of 6 gives 0.52 [0.47, 0.57] to [SEP]: its interval straddles one half",
        ),
        Case(
            sep,
            "not testable",
            _heads([]),
            "a run written before clark_heads kept the attention to [SEP] per layer",
        ),
        Case(
            name,
            "supported",
            _heads([], margin=0.05),
            "heads of one layer closer by 0.05 [0.02, 0.08]; pre-trained: no gate",
        ),
        Case(
            name,
            "contradicted",
            _heads([], margin=-0.05),
            "heads of one layer farther apart by 0.05 [0.02, 0.08]",
        ),
    ]
