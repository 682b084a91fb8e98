"""Kovaleva et al. (2019), Sec. 3, Table 1: fine-tuning pre-trained BERT beats fine-tuning
it from random weights and not fine-tuning it at all.

Table 1's dev rows also tell the claims engine whether a fine-tuned model learned its task
(the learning gate, pipeline/claims/validity.py), how large a task's whole dev set is (the
prepare stage's count), and which tasks the registry declares every claim over: `PROVIDES`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from pipeline.analyses.prepare.results import PrepareMetrics
from pipeline.analyses.table1.results import Table1Metrics, TaskRow
from pipeline.claims.cases import SEED, Case, interval
from pipeline.claims.claim import Claim, Scope, Source
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.provides import LearnedGate, Provides
from pipeline.claims.rules import Beyond, Estimate, smallest
from pipeline.claims.thresholds import DIRECTION
from pipeline.claims.validity import Learning
from pipeline.core.results import Family, Results

PAPER = "Kovaleva et al. 2019"
# Table 1 (bert-base-uncased, GLUE dev, main metric): pre-trained + fine-tuning, random init +
# fine-tuning, no fine-tuning. MRPC and QQP: accuracy; STS-B: printed as "Acc" (a correlation).
TABLE1 = {
    "mrpc": (82.3, 68.3, 31.6),
    "stsb": (82.7, 2.9, 33.1),
    "sst2": (92.0, 80.5, 49.1),
    "qqp": (78.6, 63.2, 60.9),
    "rte": (64.6, 52.7, 52.7),
    "qnli": (84.4, 49.5, 52.8),
    "mnli": (78.6, 61.0, 31.7),
}
# the config keys each claim family's measurement depends on (measurement_pins.py)
SETTINGS = {"kovaleva.table1_order": ("finetune.epochs", "finetune.baselines", "table1")}


def table1_order(task: str) -> Claim:
    def measure(out: StageOutputs, seed: int) -> Estimate:
        row = out.read(Table1Metrics, seed).tasks[task]
        weakest = smallest(
            Estimate.of(row.finetuned_minus_random_init),
            Estimate.of(row.finetuned_minus_pretrained),
        )
        return replace(weakest, evidence={"rows": row.examples} if row.examples else {})

    printed = TABLE1.get(task)
    gap = None if printed is None else min(printed[0] - printed[1], printed[0] - printed[2]) / 100
    return Claim(
        name=f"kovaleva.table1_order.{task}",
        source=Source(
            PAPER,
            "Sec. 3, Table 1",
            "fine-tuning pre-trained BERT scores higher than fine-tuning it from random weights, "
            "and higher than pre-trained BERT without fine-tuning",
            number=gap,
            number_note="the smaller of Table 1's two gaps, main metric",
            unit=0.001,
        ),
        finding=f"pre-trained + fine-tuned beats random init + fine-tuned and no fine-tuning "
        f"({task})",
        statistic="the smaller of the paired differences finetuned - random_init and "
        "finetuned - pretrained (same dev rows)",
        rule=Beyond(DIRECTION),
        measure=measure,
        finetuned=(task,),
        gated=False,
        effect=gap,
    )


def claims(scope: Scope) -> list[Claim]:
    return [table1_order(t) for t in scope.tasks]


def learning(out: StageOutputs, task: str, seed: int) -> Learning:
    """What the learning gate reads of `task`'s model of `seed`: its Table 1 row."""
    row = out.read(Table1Metrics, seed).tasks[task]
    return Learning(
        score=Estimate.of(row.finetuned),
        over_chance=Estimate.of(row.finetuned_minus_chance),
        over_pretrained=Estimate.of(row.finetuned_minus_pretrained),
        chance=row.chance,
        pretrained=row.pretrained,
    )


def dev_rows(out: StageOutputs, task: str) -> float:
    """`task`'s whole dev set: the prepare stage's count of its evaluation split before any
    cap (NaN without that count)."""
    if not out.has(PrepareMetrics):
        return math.nan
    rows = out.read(PrepareMetrics).dev_rows(task)
    return math.nan if rows is None else rows


def learned_row(ahead: float = 0.1, learned: bool = True) -> TaskRow:
    """A task's Table 1 row: fine-tuned 0.8 (0.55 when not `learned`: its margin over chance
    straddles 0), `ahead` of random init (+-0.05), 0.3 above no fine-tuning."""
    return TaskRow(
        finetuned=interval(0.8 if learned else 0.55, 0.05),
        finetuned_minus_chance=interval(0.3, 0.05) if learned else interval(0.03, 0.05),
        finetuned_minus_pretrained=interval(0.3, 0.05),
        finetuned_minus_random_init=interval(ahead, 0.05),
        chance=0.5,
        pretrained=0.5,
    )


def table1(rows: Mapping[str, TaskRow], seed: int = SEED) -> dict[tuple, Results]:
    """Table 1 of `seed` with these tasks' rows."""
    return {(Table1Metrics, seed): Table1Metrics(Family(rows))}


PROVIDES = Provides(
    learned=LearnedGate(
        read=learning,
        case=lambda task, seed, learned: table1({task: learned_row(learned=learned)}, seed),
    ),
    dev_rows=dev_rows,
    tasks=tuple(TABLE1),  # every task of Kovaleva et al.'s Table 1
)


def cases() -> list[Case]:
    name = "kovaleva.table1_order.sst2"
    return [
        Case(
            name,
            "supported",
            table1({"sst2": learned_row(ahead=0.1)}),
            "0.1 [0.05, 0.15] ahead of random init, 0.3 of no fine-tuning: both gaps above 0",
        ),
        Case(
            name,
            "contradicted",
            table1({"sst2": learned_row(ahead=-0.1, learned=False)}),
            "random init ahead by 0.1 [0.05, 0.15]; not gated: a model that did not learn "
            "still answers Table 1's claim",
        ),
    ]
