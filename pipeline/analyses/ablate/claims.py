"""Removing heads and layers, and pruning them: Kovaleva et al. (2019), Sec. 5, Figs. 8-9
(a single head's or layer's removal, and a random head's, can improve the score), and
Michel et al. (2019), Sec. 4.2 (a large share of heads can be pruned at a small cost).

The ablation rows also tell the claims engine how much room a model has above chance for a
removal or pruning claim (the headroom gate, pipeline/claims/validity.py): `PROVIDES`."""

from __future__ import annotations

from pipeline.analyses.ablate.results import (
    AblateMetrics,
    AblationRows,
    HeadRemovals,
    LayerRemovals,
    Pruning,
)
from pipeline.claims.cases import SEED, Case, interval, learned_results
from pipeline.claims.claim import Claim, Scope, Source
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.provides import Provides
from pipeline.claims.rules import Beyond, Estimate
from pipeline.claims.selection import best_removal, mean_removal
from pipeline.claims.thresholds import DIRECTION, NOT_NOTICEABLE, PRUNED_FRACTION
from pipeline.claims.unchanged import changed_share_bound
from pipeline.claims.validity import Room, constant_score
from pipeline.core.results import Results
from pipeline.core.schema import load_task

PAPER = "Kovaleva et al. 2019"
MICHEL = "Michel et al. 2019"
# Sec. 5: the best single head's removal gains +0.1 (STS-B) up to +1.2 points (MRPC); disabling
# layer 1 on RTE gains +3.2. A task without a printed gain is held, for the power check only,
# to the largest printed one, labelled as assumed.
BEST_HEAD_GAIN = {"stsb": 0.001, "mrpc": 0.012}
BEST_LAYER_GAIN = {"rte": 0.032}
# The paper names no metric for Fig. 8: MRPC's colour scale (0.876-0.894) fits F1 (Table 1:
# 87.9), not accuracy (82.3). Every removal row reads the task's main metric all the same
# (MRPC: accuracy), the one every ablation table scores with an interval and the headroom
# gate measures the room above chance in, so that a row and its gate read one metric.
UNNAMED_METRIC = {"mrpc": "the paper names no metric; its MRPC colour scale fits F1"}
# Sec. 4.1 prints one per-type share on these tasks (QQP's 61% is above half: no row there)
RANDOM_HEAD_TASKS = ("mrpc", "rte")  # Sec. 5: a random head's removal helps on average
TASK_NAMES = {"mrpc": "MRPC", "stsb": "STS-B", "rte": "RTE", "sst2": "SST-2"}
REMOVALS = {"heads": HeadRemovals, "layers": LayerRemovals}
# the config keys each claim family's measurement depends on (measurement_pins.py)
REMOVAL = (
    "ablate.num_examples",
    "ablate.num_examples_by_task",
    "ablate.mode",
    "ablate.bootstrap_resamples",
)
SETTINGS = {
    "kovaleva.heads_removal_helps": REMOVAL,
    "kovaleva.layers_removal_helps": REMOVAL,
    "extension.layers_removal_helps": REMOVAL,
    "kovaleva.random_head_removal_helps": REMOVAL,
    "extension.prune_40_percent_small_cost": (
        *REMOVAL,
        "ablate.importance_split",
        "ablate.importance_examples",
        "ablate.prune_step",
        "ablate.prune_keep",
    ),
}


def removal_helps(task: str, unit: str) -> Claim:
    """Figs. 8 (unit `heads`) and 9 (unit `layers`). The paper states the heads' finding for
    every task (the best gain ranges over tasks) and the layers' for RTE alone: a layer row
    of another task is this project's extension of it."""

    metric = load_task(task).main_metric

    def measure(out: StageOutputs, seed: int) -> Estimate:
        rows = out.read(AblateMetrics, task, seed).num_examples
        return best_removal(out.read(REMOVALS[unit], task, seed).frame(), rows, unit)

    printed_gains = BEST_HEAD_GAIN if unit == "heads" else BEST_LAYER_GAIN
    printed = printed_gains.get(task)
    largest_task, largest = max(printed_gains.items(), key=lambda item: item[1])
    figure = "Fig. 8" if unit == "heads" else "Fig. 9"
    statement = (
        "disabling a single head can improve the score: the best head's removal gains from "
        "+0.1 (STS-B) up to +1.2 points (MRPC)"
        if unit == "heads"
        else "disabling a whole layer can improve the score: disabling layer 1 on RTE gains "
        "+3.2 points; on QNLI and MNLI a layer costs at most 0.2"
    )
    extension = unit == "layers" and printed is None
    effect = printed if printed is not None else largest
    best = "best-head gain" if unit == "heads" else "layer gain"
    unnamed = UNNAMED_METRIC.get(task) if unit == "heads" else None
    return Claim(
        name=f"{'extension' if extension else 'kovaleva'}.{unit}_removal_helps.{task}",
        source=Source(
            PAPER,
            f"Sec. 5, {figure}",
            statement,
            number=printed,
            unit=0.001,
            number_note="the best removal's gain, as printed"
            + (f" ({unnamed}; read here in {metric}, as the headroom gate)" if unnamed else ""),
        ),
        finding=f"removing some single {unit[:-1]} improves the task metric ({task}"
        f"{'; the paper states it for RTE only' if extension else ''})",
        statistic=f"the best {unit[:-1]} removal's change in {metric} (the task's main metric, "
        f"which the headroom gate reads too), with a simultaneous "
        f"(Bonferroni) interval over all {unit}, so it accounts for choosing the best",
        rule=Beyond(DIRECTION),
        measure=measure,
        finetuned=(task,),
        effect=effect,
        effect_source=""
        if printed is not None
        else f"assumed: {TASK_NAMES[largest_task]}'s +{100 * largest:.1f}, the largest {best} "
        "the paper prints",
        headroom=effect,
        extension=extension,
    )


def random_head_removal_helps(task: str) -> Claim:
    """Sec. 5: on MRPC and RTE, disabling a random head improves the score on average."""

    def measure(out: StageOutputs, seed: int) -> Estimate:
        rows = out.read(AblateMetrics, task, seed).num_examples
        return mean_removal(out.read(HeadRemovals, task, seed).frame(), rows)

    return Claim(
        name=f"kovaleva.random_head_removal_helps.{task}",
        source=Source(
            PAPER,
            "Sec. 5, Fig. 8",
            "on MRPC and RTE, disabling a head picked at random improves the score on average",
        ),
        finding=f"disabling a head picked at random improves the task metric on average ({task})",
        statistic="mean over every head of the metric change its removal causes; interval: "
        "the mean of the heads' half-widths on each side (conservative: the heads' changes "
        "are read on the same rows)",
        rule=Beyond(DIRECTION),
        measure=measure,
        finetuned=(task,),
        headroom=0.0,
    )


def pruned_cost(out: StageOutputs, task: str, seed: int) -> Estimate:
    """The main metric's change at the pruning-curve point nearest PRUNED_FRACTION, with its
    paired interval (the same rows pruned and unpruned); when pruning changed no prediction
    (an interval of zero width), the interval is the bound of `unchanged`."""
    curve = out.read(Pruning, task, seed)
    point = (curve.fraction_pruned - PRUNED_FRACTION).abs().idxmin()  # the row's label
    rows = out.read(AblateMetrics, task, seed).num_examples
    delta, low, high = (float(c.loc[point]) for c in (curve.delta, curve.delta_ci_low,
                                                          curve.delta_ci_high))  # fmt: skip
    note = ""
    if low == high:
        bound = changed_share_bound(rows)
        low, high = delta - bound, delta + bound
        note = (
            f"pruning changed no prediction on the {rows:.0f} rows; the interval is the "
            f"Clopper-Pearson bound +-{bound:.3f}"
        )
    return Estimate(delta, low, high, note=note, evidence={"rows": rows})


def large_fraction_prunable(task: str) -> Claim:
    return Claim(
        name=f"extension.prune_{round(PRUNED_FRACTION * 100)}_percent_small_cost.{task}",
        source=Source(
            MICHEL,
            "Sec. 4.2, Fig. 3b",
            "for BERT on MNLI-matched, about 40% of the heads can be pruned by importance at "
            "test time without a noticeable loss",
        ),
        finding=f"{PRUNED_FRACTION:.0%} of heads, pruned by importance, cost less than "
        f"{-NOT_NOTICEABLE.value:g} of the main metric ({task}; the paper states it for "
        "MNLI-matched only, which has no offline copy here: an extension)",
        statistic=f"main-metric change with {PRUNED_FRACTION:.0%} of heads pruned (paired)",
        rule=Beyond(NOT_NOTICEABLE),
        measure=lambda out, seed: pruned_cost(out, task, seed),
        finetuned=(task,),
        effect=-NOT_NOTICEABLE.value,
        effect_source="this project's margin: a loss under "
        f"{-NOT_NOTICEABLE.value:g} (NOT_NOTICEABLE), the paper's loss taken as about 0",
        headroom=-NOT_NOTICEABLE.value,
        extension=True,
    )


def claims(scope: Scope) -> list[Claim]:
    tasks = scope.tasks
    found = [removal_helps(t, unit) for unit in ("heads", "layers") for t in tasks]
    found += [random_head_removal_helps(t) for t in tasks if t in RANDOM_HEAD_TASKS]
    found += [large_fraction_prunable(t) for t in tasks]
    return found


def room(out: StageOutputs, task: str, seed: int) -> Room:
    """What the headroom gate reads of `task`'s model of `seed`: its unablated score on the
    ablation rows and the best constant prediction's."""
    ablated = out.read(AblateMetrics, task, seed)
    metric = "accuracy" if ablated.main_metric is None else ablated.main_metric
    labels = out.read(AblationRows, task, seed).label
    return Room(metric, len(labels), constant_score(metric, labels), Estimate.of(ablated.baseline))


PROVIDES = Provides(room=room)


def ablation_rows(task: str, baseline: float = 0.8, rows: int = 96) -> dict[tuple, Results]:
    """`task`'s ablation rows (half of each label: chance 0.5) and the unablated model's
    accuracy on them, `baseline` +-0.08."""
    return {
        (AblateMetrics, task, SEED): AblateMetrics(
            float(rows), interval(baseline, 0.08), "accuracy"
        ),
        (AblationRows, task, SEED): AblationRows.of(label=[0, 1] * (rows // 2)),
    }


def _removals(task: str, deltas: list[float], baseline: float = 0.8) -> dict:
    """`task`'s model (learned; its ablation rows' baseline `baseline`) with one head per
    delta (each +-0.03, q 0.01) and one layer per delta."""
    removals = {
        "delta": deltas,
        "ci_low": [d - 0.03 for d in deltas],
        "ci_high": [d + 0.03 for d in deltas],
        "q_value": [0.01] * len(deltas),
    }
    return (
        {(HeadRemovals, task, SEED): HeadRemovals.of(**removals),
         (LayerRemovals, task, SEED): LayerRemovals.of(**removals)}
        | ablation_rows(task, baseline) | learned_results(task)
    )  # fmt: skip


def _pruned(delta: float, half_width: float) -> dict:
    """SST-2's pruning curve: `delta` +-`half_width` at 42% of heads pruned."""
    curve = Pruning.of(
        fraction_pruned=[0.0, 0.3, 0.42, 0.5],
        delta=[0.0, 0.0, delta, -0.2],
        delta_ci_low=[0.0, -0.02, delta - half_width, -0.3],
        delta_ci_high=[0.0, 0.02, delta + half_width, -0.1],
    )
    return {(Pruning, "sst2", SEED): curve} | ablation_rows("sst2") | learned_results("sst2")


def cases() -> list[Case]:
    heads, rte, mrpc = "kovaleva.heads_removal_helps.sst2", Scope(("rte",)), Scope(("mrpc",))
    prune = "extension.prune_40_percent_small_cost.sst2"
    return [
        Case(
            heads,
            "supported",
            _removals("sst2", [0.06, 0.0, -0.02]),
            "the best head gains 0.06; 0.06 - 2.39 x 0.0153 > 0 after the widening for 3 heads",
        ),
        Case(
            heads,
            "not testable",
            _removals("sst2", [0.06, 0.0, -0.02], baseline=0.55),
            "the ablation rows' baseline 0.55 [0.47, 0.63] leaves no room above chance (0.5)",
        ),
        Case(
            "kovaleva.layers_removal_helps.rte",
            "contradicted",
            _removals("rte", [-0.1, -0.2]),
            "every layer's removal hurts, even after the widening",
            rte,
        ),
        Case(
            "kovaleva.layers_removal_helps.rte",
            "supported",
            _removals("rte", [-0.1, 0.1]),
            "layer 2's removal gains 0.1, layer 1's costs 0.1: the best removal, not the worst "
            "nor the mean (0), decides",
            rte,
        ),
        Case(
            "extension.layers_removal_helps.sst2",
            "contradicted",
            _removals("sst2", [-0.1, -0.2]),
            "every layer's removal hurts (the paper states it for RTE only)",
        ),
        Case(
            "kovaleva.random_head_removal_helps.mrpc",
            "supported",
            _removals("mrpc", [0.05, 0.06, 0.07]),
            "every head's removal helps: 0.06 [0.03, 0.09]",
            mrpc,
        ),
        Case(
            "kovaleva.random_head_removal_helps.mrpc",
            "inconclusive",
            _removals("mrpc", [0.06, 0.0, -0.02]),
            "on average 0.013 [-0.017, 0.043]",
            mrpc,
        ),
        Case(
            prune,
            "underpowered",
            _pruned(-0.01, 0.03),
            "-0.01 [-0.04, 0.02] on 96 rows detects 0.043, above the margin 0.01",
        ),
        Case(prune, "supported", _pruned(-0.001, 0.005), "-0.001 [-0.006, 0.004] > -0.01"),
        Case(prune, "contradicted", _pruned(-0.1, 0.03), "-0.1 [-0.13, -0.07] < -0.01"),
    ]
