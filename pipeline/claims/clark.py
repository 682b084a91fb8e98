"""Clark et al. (2019), "What Does BERT Look At?": the findings this pipeline tests, each
with the paper's statement and, where it prints one, its number (measured on WSJ and
CoNLL-2012 with bert-base; here on UD English EWT and GAP with this run's model)."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.claims.claim import Claim, Source
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import Beyond
from pipeline.claims.thresholds import DIRECTION
from pipeline.core.stage import seed_folder

PAPER = "Clark et al. 2019"
UD = ("clark_syntax", "ud")
HEAD_MINUS_OFFSET = "_head_minus_offset"

# Table 1: the best head's accuracy and the best fixed offset's, Stanford Dependencies on WSJ,
# for the relations whose name UD (subtypes stripped) shares: UD relation -> (head, offset).
TABLE1 = {
    "all_relations": (34.5, 26.3),
    "det": (94.3, 51.7),
    "compound": (70.4, 70.2),  # SD `nn`
    "nsubj": (58.5, 45.5),
    "amod": (75.6, 68.3),
    "obj": (86.8, 40.0),  # SD `dobj`
    "advmod": (48.8, 40.2),
    "aux": (81.1, 71.5),
    "ccomp": (48.8, 12.4),
    "mark": (50.7, 14.5),
}


def relations(out: StageOutputs) -> list[str]:
    """The dependency relations the syntax stage scored (those with a head-offset difference)."""
    return sorted(
        k[: -len(HEAD_MINUS_OFFSET)] for k in out.metrics(*UD) if k.endswith(HEAD_MINUS_OFFSET)
    )


def head_beats_offset(relation: str) -> Claim:
    printed = TABLE1.get(relation)
    gap = None if printed is None else (printed[0] - printed[1]) / 100
    return Claim(
        name=f"clark.head_beats_offset.{relation}",
        source=Source(
            PAPER,
            "Sec. 4.2, Table 1",
            "for many dependency relations a single head finds the dependent's head better "
            "than the best fixed-offset baseline",
            number=gap,
            number_note="best head's accuracy - best offset's (WSJ)",
        ),
        finding=f"a single head finds `{relation}` heads better than the best fixed offset",
        statistic="best head's accuracy - best offset's accuracy (same words; head chosen on "
        "other sentences)",
        rule=Beyond(DIRECTION),
        measure=lambda out, seed: out.interval(UD, f"{relation}{HEAD_MINUS_OFFSET}"),
        effect=gap,
    )


def coref_head_beats_nearest() -> Claim:
    return Claim(
        name="clark.coref_head_beats_nearest",
        source=Source(
            PAPER,
            "Sec. 4.3, Table 2",
            "head 5-4 finds coreferent antecedents with 65% accuracy, against 27% for the "
            "nearest mention",
            number=0.65 - 0.27,
            number_note="head 65 - nearest mention 27 (CoNLL-2012)",
        ),
        finding="a head finds coreferent antecedents better than the nearest-mention baseline",
        statistic="head accuracy - nearest-mention accuracy (same report examples; head chosen "
        "on other examples)",
        rule=Beyond(DIRECTION),
        measure=lambda out, seed: out.interval(("clark_coref", "gap"), "head_minus_nearest"),
        effect=0.65 - 0.27,
    )


def probe_beats_right_branching() -> Claim:
    return Claim(
        name="clark.probe_beats_right_branching",
        source=Source(
            PAPER,
            "Sec. 5, Table 3",
            "a probe on attention alone parses with 61 UAS, against 26 for a right-branching "
            "baseline",
            number=0.61 - 0.26,
            number_note="attention-only probe 61 - right-branching 26 UAS (WSJ)",
        ),
        finding="the attention-only probe parses better than a right-branching baseline",
        statistic="probe UAS - right-branching UAS (same sentences)",
        rule=Beyond(DIRECTION),
        measure=lambda out, seed: out.interval(UD, "probe_minus_right_branching"),
        effect=0.61 - 0.26,
    )


def same_layer_heads_alike(task: str) -> Claim:
    return Claim(
        name=f"extension.same_layer_heads_alike.{task}",
        source=Source(PAPER, "Sec. 6, Fig. 6", "heads within the same layer tend to behave alike"),
        finding=f"heads of the same layer attend more alike than heads of different layers "
        f"({task} inputs, pre-trained model; this project's margin, not the paper's measure)",
        statistic="mean distance between heads of different layers - of the same layer",
        rule=Beyond(DIRECTION),
        measure=lambda out, seed: out.interval(
            ("clark_heads", task, seed_folder(seed)), "same_layer_margin"
        ),
        extension=True,
    )


def claims(tasks: Sequence[str], out: StageOutputs) -> list[Claim]:
    found = [head_beats_offset(r) for r in relations(out)]
    found += [coref_head_beats_nearest(), probe_beats_right_branching()]
    found += [same_layer_heads_alike(t) for t in tasks]
    return found
