"""A finding read two ways: each reading its own row, one finding row judged from them and
counted once (pipeline/claims/readings.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from pipeline.analyses.clark_syntax.claims import (
    OVERALL,
    no_head_does_syntax_overall_absolute,
    no_head_does_syntax_overall_relative,
)
from pipeline.analyses.clark_syntax.results import UdMetrics
from pipeline.claims.cases import interval
from pipeline.claims.claim import Claim
from pipeline.claims.evaluate import evaluate, flat_metrics, headline_counts
from pipeline.claims.outputs import SyntheticOutputs
from pipeline.claims.readings import combined
from pipeline.core.results import Family


@pytest.mark.parametrize(
    ("absolute", "relative", "finding"),
    [
        ("supported", "supported", "supported"),
        ("contradicted", "contradicted", "contradicted"),
        ("supported", "contradicted", "reading-dependent"),
        ("contradicted", "supported", "reading-dependent"),
        ("supported", "inconclusive", "inconclusive"),
        ("supported", "underpowered", "inconclusive"),
        ("inconclusive", "underpowered", "inconclusive"),
        ("underpowered", "underpowered", "underpowered"),
        ("supported", "seed-dependent", "seed-dependent"),
        ("supported", "not testable", "not testable"),
        ("not testable", "not testable", "not testable"),
    ],
)
def test_a_finding_is_decided_only_where_its_readings_agree(absolute, relative, finding):
    verdicts = {"absolute": absolute, "relative": relative}
    reasons = {"absolute": "a", "relative": "why not"}
    verdict, reason = combined(verdicts, reasons)
    assert verdict == finding
    if finding == "not testable":
        assert "not testable (why not)" in reason
    else:
        assert reason == f"absolute: {absolute}; relative: {relative}"


def _judged(accuracy: float, gain: float) -> pd.DataFrame:
    metrics = UdMetrics(
        Family({}), interval(accuracy, 0.05), interval(0.2, 0.05), interval(gain, 0.1)
    )
    claims = [no_head_does_syntax_overall_absolute(), no_head_does_syntax_overall_relative()]
    table, _ = evaluate(claims, SyntheticOutputs({(UdMetrics,): metrics}), [42])
    return table


def test_the_finding_row_comes_first_and_alone_counts_among_the_papers_findings():
    table = _judged(accuracy=0.43, gain=0.8)  # under half of the words; 0.8 of the gain
    assert list(table["claim"]) == [OVERALL, f"{OVERALL}.absolute", f"{OVERALL}.relative"]
    assert list(table["kind"]) == ["paper", "reading", "reading"]
    assert list(table["verdict"]) == ["reading-dependent", "supported", "contradicted"]
    assert headline_counts(table).startswith("0 supported, 0 contradicted")
    assert "1 reading-dependent" in headline_counts(table)
    metrics = flat_metrics(table)
    assert metrics["verdicts.paper.reading_dependent"] == 1
    assert metrics["verdicts.paper.supported"] == 0


def test_readings_that_agree_decide_the_finding():
    table = _judged(accuracy=0.3, gain=0.2)
    assert table.loc[table["claim"] == OVERALL, "verdict"].item() == "supported"


def test_the_relative_reading_holds_on_table_1_itself():
    claim = no_head_does_syntax_overall_relative()
    assert claim.source.number == 0.25  # (34.5 - 26.3) / 32.8, the 13 relations' median
    assert claim.rule.side == "below" and claim.rule.threshold.value == 0.5


def test_a_readings_name_ends_in_its_reading():
    claim = no_head_does_syntax_overall_relative()
    with pytest.raises(ValueError, match="ends in its reading"):
        Claim(**{**claim.__dict__, "name": "clark.no_head_does_syntax_overall.other"})
