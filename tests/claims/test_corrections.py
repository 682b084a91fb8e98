"""Corrections of what the claims say (registry versions 3 and 6): rows the papers never ran,
or whose bound is the project's reading, are extensions; Clark's "All" row is read
absolutely; CoNLL's numbers stay out of GAP's paper column and its power check; MRPC's
head-removal row reads the metric its gate reads; an underpowered row says whether rows,
seeds or both would decide it."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from pipeline.analyses.ablate.claims import large_fraction_prunable, removal_helps
from pipeline.analyses.clark_coref.claims import coref_head_beats_nearest
from pipeline.analyses.clark_syntax.claims import no_head_does_syntax_overall_absolute
from pipeline.analyses.gates.claims import most_heads_prunable
from pipeline.analyses.patterns_apply.claims import heterogeneous_minority
from pipeline.claims.evaluate import (
    _underpowered_reason,
    flat_metrics,
    headline_counts,
    rows_needed,
    seeds_needed,
)
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import Estimate


def test_rows_the_papers_never_ran_are_extensions():
    for claim in [
        *map(large_fraction_prunable, ("sst2", "mrpc", "rte", "stsb")),
        most_heads_prunable(),
    ]:
        assert claim.extension and claim.name.startswith("extension."), claim.name


def test_the_all_row_reads_the_best_heads_accuracy_against_half():
    """Registry version 6: absolute, not the margin over the offset (the paper's +8.2 was an
    estimate put as a threshold, on which bert-base itself sat)."""
    claim = no_head_does_syntax_overall_absolute()
    assert claim.source.number == 0.345 and claim.rule.side == "below"
    assert claim.rule.threshold.value == 0.5 and not claim.rule.threshold.from_paper
    assert claim.rule(Estimate(0.431, 0.424, 0.439)) == "supported"  # MiniLM's 43.1%
    assert claim.rule(Estimate(0.62, 0.60, 0.64)) == "contradicted"
    assert claim.rule(Estimate(0.50, 0.48, 0.52)) == "inconclusive"
    assert claim.rule.scaled(2.0).decided_in_advance()  # under 1 of an accuracy: always
    assert not claim.rule.scaled(0.5).decided_in_advance()


def test_conll_numbers_stay_out_of_gaps_paper_column():
    claim = coref_head_beats_nearest()
    assert claim.source.number is None and "CoNLL-2012" in claim.source.number_note
    assert "65" not in claim.source.statement and "27" not in claim.source.statement
    assert claim.effect is None  # CoNLL's 0.38 sets no power check on GAP's two-way scale


def test_the_heterogeneous_minority_row_is_an_extension():
    """The paper prints 32-61% (QQP 61%): "under half" is the project's reading."""
    claim = heterogeneous_minority("mrpc")
    assert claim.extension and claim.name == "extension.heterogeneous_minority.mrpc"
    assert not claim.rule.threshold.from_paper


def _pooled(between: float, within: float, seeds: int = 3) -> Estimate:
    half = math.hypot(between, within)
    return Estimate(
        0.0, -half, half, critical=1.96,
        evidence={"seeds": seeds, "between_seeds": between, "within_seeds": within, "rows": 96},
    )  # fmt: skip


def _ablated_heads(tmp_path, with_f1: bool) -> StageOutputs:
    """Three MRPC heads on 100 rows: in accuracy the third's removal helps most (+0.03), in
    F1 the first's (+0.05)."""
    (tmp_path / "metrics/ablate/mrpc").mkdir(parents=True)
    (tmp_path / "metrics/ablate/mrpc/seed42.json").write_text(
        json.dumps(
            {"num_examples": 100, "baseline": 0.7, "baseline_ci_low": 0.6, "baseline_ci_high": 0.8}
        )
    )
    heads = pd.DataFrame(
        {"layer": [1, 1, 2], "head": [1, 2, 1], "delta": [0.0, -0.01, 0.03],
         "ci_low": [-0.02, -0.03, 0.01], "ci_high": [0.02, 0.01, 0.05], "q_value": [1, 1, 0.2]}
    )  # fmt: skip
    if with_f1:
        heads = heads.assign(
            delta_f1=[0.05, 0.0, 0.01],
            ci_low_f1=[0.03, -0.02, -0.01],
            ci_high_f1=[0.07, 0.02, 0.03],
        )
    (tmp_path / "plots/ablate/mrpc/seed42").mkdir(parents=True)
    heads.to_csv(tmp_path / "plots/ablate/mrpc/seed42/heads.csv", index=False)
    return StageOutputs(tmp_path)


def test_mrpcs_head_removal_row_reads_the_metric_its_headroom_gate_reads(tmp_path):
    """Registry version 6: one metric for the row and its gate, the task's main one
    (accuracy), whether or not the ablation table also holds F1."""
    claim = removal_helps("mrpc", "heads")
    assert claim.statistic.startswith("the best head removal's change in accuracy")
    assert "names no metric" in claim.source.number_note
    for folder, with_f1 in (("f1", True), ("accuracy", False)):
        measured = claim.measure(_ablated_heads(tmp_path / folder, with_f1=with_f1), 42)
        assert measured.statistic == pytest.approx(0.03)  # the third head, in accuracy


def test_a_row_the_seeds_spread_keeps_undecided_asks_for_seeds_and_says_how_many():
    measured = _pooled(between=0.03, within=0.002)
    assert math.isinf(rows_needed(measured, 0.012))
    needed = seeds_needed(measured, 0.012)
    assert 3 < needed < 50
    assert seeds_needed(_pooled(0.015, 0.002), 0.012) < needed  # a narrower spread: fewer
    assert seeds_needed(measured, 0.012 / 100) == math.inf  # the rows' part alone too wide


def test_the_headline_counts_too_few_seeds_apart_from_a_small_dev_set():
    """Four underpowered rows: a (no rows on these seeds; 12 seeds would), b (5,000 rows,
    more than the dev set), c (50 rows, decidable), d (neither rows nor 50 seeds: standard
    STS-B's head row): 1 short of rows, 1 of seeds alone, 1 of both."""
    table = pd.DataFrame(
        {
            "kind": ["paper"] * 4,
            "verdict": ["underpowered"] * 4,
            "decidable": [False, False, True, False],
            "rows_needed": [math.inf, 5000.0, 50.0, math.inf],
            "seeds_needed": [12.0, math.nan, math.nan, math.inf],
            "claim": ["a", "b", "c", "d"],
            "estimate": [math.nan] * 4,
            "seeds": [3.0] * 4,
            "seeds_same_verdict": [3.0] * 4,
        }
    )
    assert "4 underpowered (1 need more rows than their task's dev set has, 1 need more " + (
        "fine-tuning seeds, not rows, 1 need more fine-tuning seeds and more rows)"
    ) in headline_counts(table)
    metrics = flat_metrics(table)
    counted = ("not_decidable", "too_few_seeds", "rows_and_seeds")
    assert tuple(metrics[f"verdicts.paper.{k}"] for k in counted) == (1, 1, 1)


def test_the_reason_of_a_too_few_seeds_row_says_so():
    claim = no_head_does_syntax_overall_absolute()
    claim = claim.__class__(**{**claim.__dict__, "effect": 0.012})
    reason = _underpowered_reason(claim, _pooled(0.03, 0.002), 408.0)
    assert "too few seeds; ~" in reason and "seeds would on these rows" in reason
