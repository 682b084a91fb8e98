"""Clark et al. (2019), "What Does BERT Look At?": the findings this pipeline tests."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.claims.claim import Claim
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import Beyond
from pipeline.core.stage import seed_folder

PAPER = "Clark et al. 2019"
UD = ("clark_syntax", "ud")
HEAD_MINUS_OFFSET = "_head_minus_offset"


def relations(out: StageOutputs) -> list[str]:
    """The dependency relations the syntax stage scored (those with a head-offset difference)."""
    return sorted(
        k[: -len(HEAD_MINUS_OFFSET)] for k in out.metrics(*UD) if k.endswith(HEAD_MINUS_OFFSET)
    )


def head_beats_offset(relation: str) -> Claim:
    return Claim(
        name=f"clark.head_beats_offset.{relation}",
        source=f"{PAPER}, Sec. 4.2, Table 1",
        finding=f"a single head finds `{relation}` dependents better than the best fixed offset",
        statistic="best head's accuracy - best offset's accuracy (same words)",
        rule=Beyond(0.0),
        measure=lambda out: out.interval(UD, f"{relation}{HEAD_MINUS_OFFSET}"),
    )


def coref_head_beats_nearest() -> Claim:
    return Claim(
        name="clark.coref_head_beats_nearest",
        source=f"{PAPER}, Sec. 4.3",
        finding="a head finds coreferent antecedents better than the nearest-mention baseline",
        statistic="head accuracy - nearest-mention accuracy (same report examples)",
        rule=Beyond(0.0),
        measure=lambda out: out.interval(("clark_coref", "gap"), "head_minus_nearest"),
    )


def probe_beats_right_branching() -> Claim:
    return Claim(
        name="clark.probe_beats_right_branching",
        source=f"{PAPER}, Sec. 5",
        finding="the attention-only probe parses better than a right-branching baseline",
        statistic="probe UAS - right-branching UAS (same sentences)",
        rule=Beyond(0.0),
        measure=lambda out: out.interval(UD, "probe_minus_right_branching"),
    )


def same_layer_heads_alike(task: str, seed: int) -> Claim:
    return Claim(
        name=f"clark.same_layer_heads_alike.{task}",
        source=f"{PAPER}, Sec. 6, Fig. 6",
        finding=f"heads of the same layer behave alike ({task})",
        statistic="mean distance between heads of different layers - of the same layer",
        rule=Beyond(0.0),
        measure=lambda out: out.interval(
            ("clark_heads", task, seed_folder(seed)), "same_layer_margin"
        ),
    )


def claims(tasks: Sequence[str], seed: int, out: StageOutputs) -> list[Claim]:
    found = [head_beats_offset(r) for r in relations(out)]
    found += [coref_head_beats_nearest(), probe_beats_right_branching()]
    found += [same_layer_heads_alike(t, seed) for t in tasks]
    return found
