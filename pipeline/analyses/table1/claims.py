"""Kovaleva et al. (2019), Sec. 3, Table 1: fine-tuning pre-trained BERT beats fine-tuning
it from random weights and not fine-tuning it at all."""

from __future__ import annotations

from dataclasses import replace

from pipeline.analyses.table1.results import Table1Metrics
from pipeline.claims.cases import Case, learned_row, table1
from pipeline.claims.claim import Claim, Scope, Source
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import Beyond, Estimate, smallest
from pipeline.claims.thresholds import DIRECTION

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
