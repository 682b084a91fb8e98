"""What the claims table shows beside a verdict: a decided row's note stays in the note
column (not the reason), and a row without verdicts at half / double its threshold shows
no sensitivity, in the Markdown table and in the HTML report alike."""

from __future__ import annotations

import math

import pandas as pd

from pipeline.analyses.clark_heads.claims import sep_in_middle_layers
from pipeline.claims.evaluate import evaluate_claim
from pipeline.claims.measurement_pins import FIXTURE, FIXTURE_SEED
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.sensitivity import NO_SENSITIVITY, threshold_sensitivity
from pipeline.report.html import _claim_row


def test_a_decided_sep_row_keeps_its_note_out_of_the_reason():
    claim = sep_in_middle_layers(("mrpc",))  # the fixture keeps MRPC's
    measured = claim.measure(StageOutputs(FIXTURE), FIXTURE_SEED)
    assert measured.note.startswith("layers ")  # which layers are the middle ones
    row, per_seed = evaluate_claim(claim, {FIXTURE_SEED: measured}, {FIXTURE_SEED: ""}, math.nan)
    assert row["verdict"] in ("supported", "contradicted", "inconclusive")
    assert (row["reason"], row["note"]) == ("", measured.note)
    assert per_seed[0]["reason"] == ""


def test_a_not_testable_row_shows_no_sensitivity():
    assert threshold_sensitivity(0.5, math.nan, math.nan) == NO_SENSITIVITY
    assert threshold_sensitivity(0.0, math.nan, math.nan) == NO_SENSITIVITY
    assert threshold_sensitivity(0.0, "supported", "supported") == "(threshold 0)"
    assert threshold_sensitivity(0.5, "supported", "inconclusive") == "supported / inconclusive"


def test_the_report_shows_no_sensitivity_for_a_not_testable_row():
    row = {
        "claim": "kovaleva.table1_order.rte", "source": "K", "statement": "s", "finding": "f",
        "statistic": "a statistic", "rule": "r", "threshold": 0.0, "threshold_reason": "t",
        "paper_number": math.nan, "paper_number_note": "", "verdict": "not testable",
        "reason": "the rte model did not learn rte", "note": "", "estimate": math.nan,
        "ci_low": math.nan, "ci_high": math.nan, "verdict_half_threshold": math.nan,
        "verdict_double_threshold": math.nan, "seeds": 1.0, "seeds_same_verdict": 1.0,
        "power_effect": math.nan, "power_effect_source": "",
    }  # fmt: skip
    html = _claim_row(next(pd.DataFrame([row]).itertuples()))
    assert "(threshold 0)" not in html and f"<td>{NO_SENSITIVITY}</td>" in html
