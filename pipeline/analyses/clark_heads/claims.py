"""Clark et al. (2019) on where the pre-trained model's heads attend: over half of the middle
layers' attention goes to [SEP] (Sec. 3, Fig. 2), most of it to a few sink tokens ([CLS],
[SEP], periods and commas: Sec. 3, the "no-op" reading), and heads within one layer behave
alike (Sec. 6, Fig. 6; an extension: this project's margin, not the paper's measure).

Each reads the pre-trained model alone, so each is one row per model, not one per task: its
statistic is measured on each task's dev examples by the clark_heads stage and pooled over
the tasks with two segments (Clark et al. read pairs of Wikipedia segments), as a stratified
mean (pipeline/claims/strata.py). A run with no two-segment task pools over all its tasks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from pipeline.analyses.clark_heads.results import ClarkHeadsMetrics
from pipeline.claims.cases import SEED, Case, interval
from pipeline.claims.claim import Claim, Scope, Source
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import Beyond, Estimate, undefined
from pipeline.claims.strata import stratified
from pipeline.claims.thresholds import DIRECTION, HALF, WHOLE, Threshold
from pipeline.clark.attend import middle_layers
from pipeline.core.results import Family
from pipeline.core.schema import load_task
from pipeline.core.stats import Interval

PAPER = "Clark et al. 2019"
# the config keys each claim family's measurement depends on (measurement_pins.py)
SETTINGS = {
    name: ("tasks", "dump_attention.num_examples", "clark_heads")
    for name in (
        "clark.sep_in_middle_layers",
        "clark.middle_layers_attend_to_sinks",
        "extension.same_layer_heads_alike",
    )
}

OVER_HALF = Threshold(
    HALF, "'over half of BERT's attention' (Clark et al. Sec. 3): more than half", from_paper=True
)
MIDDLE = "the middle layers are 6-10 of 12 scaled to the model's depth"


def pooled_tasks(tasks: Sequence[str]) -> tuple[str, ...]:
    """The tasks whose inputs have two segments (as Clark et al.'s pairs of segments), or
    all of `tasks` when none has."""
    pairs = tuple(t for t in tasks if len(load_task(t).text_columns) == 2)
    return pairs or tuple(tasks)


def pooled(
    tasks: Sequence[str],
    read: Callable[[ClarkHeadsMetrics], Interval | None],
    what: str,
    by_layer: bool = True,
) -> Callable[[StageOutputs, int], Estimate]:
    """The measure: `read`'s statistic of each task's clark_heads results, pooled over
    `tasks` weighted by their examples (strata.stratified), its note the examples of each
    task (and the middle layers, `by_layer`); undefined when a task's results lack it
    (`what`, in words)."""

    def measure(out: StageOutputs, seed: int) -> Estimate:
        parts = []
        for task in tasks:
            metrics = out.read(ClarkHeadsMetrics, task, seed)
            found = read(metrics)
            if found is None:
                return undefined(
                    f"the clark_heads results of {task} hold no {what}; re-run "
                    "`dvc repro clark_heads` with the current code"
                )
            parts.append((Estimate.of(found), metrics.examples))
        depth = len(metrics.sep_attention)
        middle = middle_layers(depth) if by_layer and depth else None
        where = f"layers {middle[0]}-{middle[-1]} of {depth}; " if middle else ""
        examples = " + ".join(str(n) for _, n in parts)
        return replace(stratified(parts), note=f"{where}{examples} examples")

    return measure


def _inputs(tasks: Sequence[str]) -> str:
    return f"pre-trained model; the dev inputs of {', '.join(tasks)} pooled"


def sep_in_middle_layers(tasks: Sequence[str]) -> Claim:
    """The paper's "over half" is a bound it states, not an estimate it prints, so no paper
    number stands beside the claim and none sets a power check."""
    return Claim(
        name="clark.sep_in_middle_layers",
        source=Source(
            PAPER,
            "Sec. 3, Fig. 2",
            "in the middle layers (6-10 of bert-base's 12), over half of the attention goes "
            "to [SEP]",
            number_note="a bound ('over half'), not an estimate: Fig. 2 plots each layer's "
            "average and the paper prints no value (1000 Wikipedia segments)",
        ),
        finding=f"the middle layers give over half of their attention to [SEP] "
        f"({_inputs(tasks)}; {MIDDLE})",
        statistic="the middle layers' attention to [SEP] (per example, the mean over those "
        "layers of their heads' mean; averaged over examples, tasks weighted by examples)",
        rule=Beyond(OVER_HALF, bound=WHOLE),
        measure=pooled(tasks, lambda m: m.sep_middle, "middle layers' attention to [SEP]"),
    )


def middle_layers_attend_to_sinks(tasks: Sequence[str]) -> Claim:
    """The finding behind the [SEP] claim: the middle layers' attention goes mostly to a few
    tokens, whichever of them the model uses as its sink ([CLS] and [SEP] are the first and
    later special tokens, so MPNet's `<s>` and `</s>`)."""
    return Claim(
        name="clark.middle_layers_attend_to_sinks",
        source=Source(
            PAPER,
            "Sec. 3, Figs. 2-3",
            "a substantial amount of the attention focuses on a few tokens, [CLS], [SEP], "
            "periods and commas: over half in the middle layers goes to [SEP] alone, which the "
            "paper reads as a no-op",
            number_note="a bound ('over half' to [SEP] alone in layers 6-10), not an estimate",
        ),
        finding=f"the middle layers give over half of their attention to the special tokens "
        f"and punctuation together ({_inputs(tasks)}; {MIDDLE}; punctuation: "
        "clark_heads.punctuation)",
        statistic="the middle layers' attention to any of [CLS], [SEP] and punctuation (per "
        "example, the mean over those layers of their heads' mean; averaged over examples, "
        "tasks weighted by examples)",
        rule=Beyond(OVER_HALF, bound=WHOLE),
        measure=pooled(tasks, lambda m: m.sink_middle, "middle layers' attention to sinks"),
    )


def same_layer_heads_alike(tasks: Sequence[str]) -> Claim:
    return Claim(
        name="extension.same_layer_heads_alike",
        source=Source(PAPER, "Sec. 6, Fig. 6", "heads within the same layer tend to behave alike"),
        finding=f"heads of the same layer attend more alike than heads of different layers "
        f"({_inputs(tasks)}; this project's margin, not the paper's measure)",
        statistic="mean distance between heads of different layers - of the same layer "
        "(tasks weighted by examples)",
        rule=Beyond(DIRECTION),
        measure=pooled(tasks, lambda m: m.same_layer_margin, "same-layer margin", by_layer=False),
        extension=True,
    )


def claims(scope: Scope) -> list[Claim]:
    tasks = pooled_tasks(scope.tasks)
    return [
        sep_in_middle_layers(tasks),
        middle_layers_attend_to_sinks(tasks),
        same_layer_heads_alike(tasks),
    ]


PAIRS = Scope(("sst2", "mrpc", "rte"))  # the cases' tasks: two with two segments


def _heads(
    sep: Sequence[float] = (0.6, 0.6),
    sink: Sequence[float] = (0.8, 0.8),
    margin: Sequence[float] = (0.05, 0.05),
    examples: Sequence[int] = (64, 64),
    sep_by_layer: Sequence[float] = (0.1, 0.2, 0.6, 0.6, 0.6, 0.1),
) -> dict[tuple, ClarkHeadsMetrics]:
    """MRPC's and RTE's clark_heads results (SST-2's, one segment, are never read): each
    task's middle layers' attention to [SEP] and to any sink (+-0.05), its same-layer
    margin (+-0.03) and its examples; every task's layers as `sep_by_layer`."""
    layers = Family({n: interval(v, 0.05) for n, v in enumerate(sep_by_layer, start=1)})
    return {
        (ClarkHeadsMetrics, task, SEED): ClarkHeadsMetrics(
            interval(m, 0.03), layers, n, interval(s, 0.05), interval(k, 0.05)
        )
        for task, s, k, m, n in zip(("mrpc", "rte"), sep, sink, margin, examples, strict=True)
    }


def cases() -> list[Case]:
    sep, sinks = "clark.sep_in_middle_layers", "clark.middle_layers_attend_to_sinks"
    alike = "extension.same_layer_heads_alike"
    return [
        Case(sep, "supported", _heads(), "MRPC and RTE 0.6 [+-0.05] each: 0.6 pooled", PAIRS),
        Case(
            sep,
            "contradicted",
            _heads(sep=(0.3, 0.35)),
            "0.3 and 0.35 [+-0.05]: pooled below one half",
            PAIRS,
        ),
        Case(
            sep,
            "contradicted",
            _heads(sep=(0.3, 0.35), sep_by_layer=(0.1, 0.1, 0.2, 0.9, 0.2, 0.1)),
            "the centre middle layer gives 0.9 to [SEP], the middle layers' mean 0.3-0.35: "
            "the mean over layers 3-5 is read, not the centre layer",
            PAIRS,
        ),
        Case(
            sep,
            "contradicted",
            _heads(sep=(0.9, 0.2), examples=(10, 90)),
            "MRPC 0.9 on 10 examples, RTE 0.2 on 90: weighted by examples 0.27, while the "
            "tasks' plain mean, 0.55 [0.515, 0.585], would support it",
            PAIRS,
        ),
        Case(
            sep,
            "inconclusive",
            _heads(sep=(0.5, 0.52)),
            "0.5 and 0.52 [+-0.05]: the pooled interval straddles one half",
            PAIRS,
        ),
        Case(
            sep,
            "not testable",
            {
                (ClarkHeadsMetrics, t, SEED): ClarkHeadsMetrics(
                    interval(0.05, 0.03), Family({}), 64
                )
                for t in ("mrpc", "rte")
            },
            "a run written before clark_heads kept the middle layers' attention",
            PAIRS,
        ),
        Case(
            sinks,
            "supported",
            _heads(sep=(0.02, 0.03), sink=(0.7, 0.75)),
            "little to [SEP] but 0.7-0.75 to the sinks together: [CLS] or punctuation sink",
            PAIRS,
        ),
        Case(sinks, "contradicted", _heads(sink=(0.2, 0.3)), "0.2 and 0.3 to the sinks", PAIRS),
        Case(alike, "supported", _heads(), "heads of one layer closer by 0.05 [+-0.03]", PAIRS),
        Case(
            alike,
            "contradicted",
            _heads(margin=(-0.05, -0.04)),
            "heads of one layer farther apart by 0.04-0.05 [+-0.03]",
            PAIRS,
        ),
    ]
