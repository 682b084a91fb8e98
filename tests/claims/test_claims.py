"""The claims table: the rules on hand-made statistics, the readers' errors, and the whole
table on a hand-built outputs folder whose planted numbers decide what the table's machinery
does across claims (the validity gate, power, seeds, sensitivity and the split between the
papers' findings and extensions); each claim's own verdicts are its cases
(tests/claims/test_cases.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
import pytest

from pipeline.analyses.ablate.claims import pruned_cost
from pipeline.analyses.ablate.results import HeadRemovals
from pipeline.analyses.clark_coref.results import GapMetrics
from pipeline.analyses.table1.results import Table1Metrics
from pipeline.claims import thresholds
from pipeline.claims.evaluate import all_claims, claim_modules, evaluate, flat_metrics, summary
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import VERDICTS, Beyond, Estimate, smallest, undefined
from pipeline.claims.seeds import across_seeds
from pipeline.claims.table_markdown import results_markdown
from pipeline.claims.thresholds import DIRECTION, Threshold
from pipeline.core.errors import PipelineError
from pipeline.core.results import Covers, Metrics
from pipeline.report.html import render_report
from tests.support.claims_outputs import SEED, TASKS, _write, build_outputs

ZERO = DIRECTION
TENTH = Threshold(0.1, "a test threshold", from_paper=False)

# --- rules --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("low", "high", "verdict"),
    [(0.01, 0.2, "supported"), (-0.3, -0.01, "contradicted"), (-0.1, 0.1, "inconclusive"),
     (0.0, 0.1, "inconclusive"), (-0.1, 0.0, "inconclusive")],
)  # fmt: skip
def test_beyond_above_zero(low, high, verdict):
    assert Beyond(ZERO)(Estimate((low + high) / 2, low, high)) == verdict


@pytest.mark.parametrize(
    ("low", "high", "verdict"),
    [(0.02, 0.08, "supported"), (0.11, 0.3, "contradicted"), (0.05, 0.15, "inconclusive")],
)
def test_beyond_below_a_threshold(low, high, verdict):
    assert Beyond(TENTH, side="below")(Estimate((low + high) / 2, low, high)) == verdict


def test_rules_describe_and_scale_themselves():
    assert Beyond(TENTH).describe() == "supported if ci_low > 0.1; contradicted if ci_high < 0.1"
    below = Beyond(TENTH, side="below").describe()
    assert below == "supported if ci_high < 0.1; contradicted if ci_low > 0.1"
    measured = Estimate(0.15, 0.12, 0.18)
    assert Beyond(TENTH)(measured) == "supported"
    assert Beyond(TENTH).scaled(2.0)(measured) == "contradicted"  # 0.2 > every bound
    assert Beyond(TENTH).scaled(2.0).threshold.reason == TENTH.reason


def test_smallest_decides_like_every_interval():
    a, b = Estimate(0.3, 0.1, 0.5), Estimate(0.2, -0.05, 0.4)
    assert smallest(a, b) == Estimate(0.2, -0.05, 0.4)
    assert Beyond(ZERO)(smallest(a, b)) == "inconclusive"  # b straddles 0
    assert Beyond(ZERO)(smallest(a, Estimate(-0.2, -0.3, -0.1))) == "contradicted"
    assert smallest(a, undefined("why")).note == "why"


def test_an_undefined_statistic_is_not_testable_with_its_reason():
    missing = undefined("no map was classified vertical")
    assert missing.undefined and Beyond(ZERO)(missing) == "not testable"


def test_measured_rejects_a_broken_interval():
    with pytest.raises(ValueError):
        Estimate(0.1, 0.2, 0.0)
    with pytest.raises(ValueError):
        Estimate(float("nan"), 0.0, 1.0)  # only a wholly undefined statistic is allowed


def test_the_detectable_effect_is_z_plus_z_power_standard_errors():
    measured = Estimate(0.0, -0.196, 0.196)  # standard error 0.1
    assert measured.detectable == pytest.approx(0.1 * (1.959964 + 0.841621), abs=1e-5)


# --- a hand-built outputs folder ------------------------------------------------------------


# What the whole table must give on the folder: one claim's own verdict on its planted
# numbers is declared beside the claim (`cases()` of its analysis's claims module,
# tests/claims/test_cases.py); these are the verdicts the table's machinery decides across
# claims: the validity gate (the RTE model did not learn), which claims it gates, the rows
# a run's scored relations add, and the power check on the folder's own rows.
EXPECTED = {
    "kovaleva.table1_order.sst2": "supported",
    "kovaleva.table1_order.rte": "contradicted",  # Table 1's claim is not gated
    "kovaleva.types_recur.rte": "not testable",
    "kovaleva.last_layers_change_most.sst2": "supported",
    "kovaleva.last_layers_change_most.rte": "not testable",
    "kovaleva.layers_removal_helps.rte": "not testable",
    "kovaleva.heads_removal_helps.rte": "not testable",
    "kovaleva.random_head_removal_helps.rte": "not testable",  # RTE's model did not learn
    "clark.head_beats_offset.prt": "not testable",  # not scored: fewer arcs than min_count
    "extension.head_beats_offset.punct": "inconclusive",  # a scored relation's row
    "extension.head_beats_offset.compound": "inconclusive",  # nn: not called specialised
    "extension.prune_40_percent_small_cost.sst2": "underpowered",  # margin 0.01, detects 0.043
    "extension.special_tokens_survive_norms.rte": "not testable",
    # one row per model, pooled over RTE (the folder's one two-segment task); the stage
    # wrote no middle layers' mean here
    "clark.sep_in_middle_layers": "not testable",
    "extension.same_layer_heads_alike": "supported",
    # a finding read two ways: one reading (relative) has no statistic in this folder
    "clark.no_head_does_syntax_overall": "not testable",
    "clark.no_head_does_syntax_overall.absolute": "supported",
}


@pytest.fixture
def outputs(tmp_path) -> StageOutputs:
    build_outputs(tmp_path)
    return StageOutputs(tmp_path)


def claims_table(out: StageOutputs, seeds=(SEED,)) -> tuple[pd.DataFrame, pd.DataFrame]:
    return evaluate(all_claims(out, TASKS), out, list(seeds))


def test_every_planted_verdict(outputs):
    table, _ = claims_table(outputs)
    verdicts = dict(zip(table["claim"], table["verdict"], strict=True))
    assert {name: verdicts[name] for name in EXPECTED} == EXPECTED
    assert table["claim"].is_unique
    defined = table.dropna(subset=["estimate"])
    assert (defined["ci_low"] <= defined["estimate"]).all()
    assert (defined["estimate"] <= defined["ci_high"]).all()


def test_a_model_that_did_not_learn_makes_its_claims_not_testable_with_the_reason(outputs):
    table, by_seed = claims_table(outputs)
    row = table.set_index("claim").loc["kovaleva.last_layers_change_most.rte"]
    assert row["reason"].startswith("the rte model (seed 42) did not learn rte: dev 0.550")
    assert row["seeds_used"] == ""  # no seed's models could be used
    assert not isinstance(row["verdict_half_threshold"], str)  # no sensitivity to show
    seed_row = by_seed.set_index("claim").loc["kovaleva.last_layers_change_most.rte"]
    assert seed_row["verdict"] == "not testable"


def test_underpowered_rows_give_the_detectable_effect_and_rows_needed(outputs):
    table, _ = claims_table(outputs)
    row = table.set_index("claim").loc["extension.prune_40_percent_small_cost.sst2"]
    detectable = 0.06 / (2 * 1.959964) * (1.959964 + 0.841621)
    assert row["detectable"] == pytest.approx(detectable, rel=1e-4)
    assert row["power_effect"] == pytest.approx(0.01)
    assert math.isnan(row["paper_number"])  # the paper prints no loss: 0.01 is the margin
    assert row["power_effect_source"].startswith("this project's margin")
    needed = math.ceil(96 * (detectable / 0.01) ** 2)
    assert row["rows_needed"] == pytest.approx(needed, abs=1)
    assert "below the smallest effect this sample detects" in row["reason"]
    assert "(this project's margin" in row["reason"]
    assert row["dev_rows"] == 872 and row["decidable"] is False  # ~1,760 rows > 872
    assert "the dev set has 872: not decidable on this task" in row["reason"]
    assert flat_metrics(table)["verdicts.extension.not_decidable"] >= 1  # Michel: MNLI only


def test_the_best_head_interval_is_widened_for_the_choice(outputs):
    table, _ = claims_table(outputs)
    row = table.set_index("claim").loc["kovaleva.heads_removal_helps.sst2"]
    bonferroni = 2.39398  # z at 1 - 0.05 / (2 x 3 heads)
    assert row["ci_low"] == pytest.approx(0.06 - bonferroni * 0.03 / 1.959964, rel=1e-4)
    assert row["ci_low"] < 0.06 - 0.03  # wider than the best head's own interval


def test_the_sensitivity_columns_rescale_the_threshold(outputs):
    table, _ = claims_table(outputs)
    rows = table.set_index("claim")
    row = rows.loc["extension.special_tokens_survive_norms.sst2"]  # 0.25 [0.2, 0.3], t 0.5
    assert (row["verdict_half_threshold"], row["verdict_double_threshold"]) == (
        "inconclusive",  # 0.2 < 0.25 < 0.3
        "contradicted",  # 0.3 < 1.0
    )
    # doubling "more than half" of a share gives 1, which no share can pass
    row = rows.loc["kovaleva.vertical_is_special_tokens.sst2"]
    assert (row["verdict_half_threshold"], row["verdict_double_threshold"]) == (
        "supported",  # 0.45 > 0.25
        "decided in advance",
    )


def test_every_paper_claim_quotes_its_source_and_every_threshold_is_declared(outputs):
    claims = all_claims(outputs, TASKS)
    # in thresholds.py, or beside the one claim that uses it, in its analysis's claims module
    homes = [thresholds, *claim_modules().values()]
    declared = [v for home in homes for v in vars(home).values() if isinstance(v, Threshold)]
    for claim in claims:
        assert claim.source.statement and claim.source.where, claim.name
        assert any(claim.rule.threshold is t for t in declared), claim.name
        assert claim.name.startswith("extension.") == claim.extension, claim.name
    names = {c.name.rsplit(".", 1)[0] for c in claims}
    # findings the papers do not make are gone
    assert not names & {"kovaleva.vertical_most_frequent", "kovaleva.shares_similar_across_tasks"}
    by_name = {c.name: c for c in claims}
    assert by_name["kovaleva.table1_order.sst2"].source.number == pytest.approx(0.115)  # 92-80.5
    assert by_name["clark.head_beats_offset.nsubj"].source.number == pytest.approx(0.13)
    # none left out but block on one-sentence inputs, where it cannot occur (registry v2)
    assert (
        "four pattern types a single sentence can show"
        in by_name["kovaleva.types_recur.sst2"].finding
    )
    assert "each of the five pattern types" in by_name["kovaleva.types_recur.rte"].finding
    assert by_name["clark.head_beats_offset.poss"].source.number == pytest.approx(0.328)
    assert not any(n.startswith("clark.head_beats_offset.compound") for n in by_name)


def test_flat_metrics_count_papers_and_extensions_apart(outputs):
    table, _ = claims_table(outputs)
    metrics = flat_metrics(table)
    name = "kovaleva.table1_order.rte"
    assert metrics[f"{name}.statistic"] == pytest.approx(-0.10)
    assert metrics[f"{name}.verdict"] == "contradicted"
    counted = {f"verdicts.{{}}.{v.replace(' ', '_').replace('-', '_')}" for v in VERDICTS}
    papers = sum(metrics[k.format("paper")] for k in counted)
    extensions = sum(metrics[k.format("extension")] for k in counted)
    readings = sum(metrics[k.format("reading")] for k in counted)
    # extensions: the relations' rows, pruning, and one same-layer row for the model
    assert (papers, extensions) == ((table["kind"] == "paper").sum(), 9)
    assert readings == 2  # Clark's "All" row read two ways, counted apart from the papers
    assert (
        metrics["verdicts.paper.not_testable"]
        == ((table["kind"] == "paper") & (table["verdict"] == "not testable")).sum()
    )


def test_seeds_share_one_interval_and_only_finetuned_claims_count_for_agreement(tmp_path):
    build_outputs(tmp_path, seed=SEED, sst2_ahead=0.10, cosine_margin=0.1)
    build_outputs(tmp_path, seed=7, sst2_ahead=-0.10, cosine_margin=0.3)
    out = StageOutputs(tmp_path)
    table, by_seed = claims_table(out, seeds=(SEED, 7))
    rows = table.set_index("claim")
    order = rows.loc["kovaleva.table1_order.sst2"]
    assert (order["seeds"], order["seeds_same_verdict"]) == (2, 1)  # supported, contradicted
    per_seed = [Estimate(0.10, 0.05, 0.15), Estimate(-0.10, -0.15, -0.05)]
    combined = across_seeds(per_seed)
    assert (order["estimate"], order["ci_low"], order["ci_high"]) == pytest.approx(
        (combined.statistic, combined.ci_low, combined.ci_high)
    )
    # one seed supports Table 1's order, the other contradicts it
    assert order["verdict"] == "seed-dependent"
    assert order["reason"].startswith("supported on seed 42; contradicted on seed 7")
    assert rows.loc["kovaleva.last_layers_change_most.sst2", "seeds_same_verdict"] == 2
    assert math.isnan(rows.loc["clark.probe_beats_right_branching", "seeds"])  # pre-trained
    assert set(by_seed["seed"]) == {SEED, 7}
    metrics = flat_metrics(table)
    # only claims testable on some seed count: RTE's model learned in neither seed
    dependent = table["seeds"].notna() & (table["verdict"] != "not testable")
    assert 0 < metrics["seeds.claims"] == dependent.sum() < table["seeds"].notna().sum()
    agreeing = (table.loc[dependent, "seeds_same_verdict"] == 2).sum()
    assert metrics["seeds.same_verdict"] == agreeing == dependent.sum() - 1
    assert f"{agreeing} get the same verdict from all 2 seeds" in summary(table)
    assert "1 seed-dependent" in summary(table)
    rte = rows.loc["kovaleva.last_layers_change_most.rte", "reason"]
    assert rte.startswith("not testable on any of seeds 42, 7; seed 42: the rte model")


def test_pruned_cost_reads_the_point_nearest_forty_percent(outputs):
    measured = pruned_cost(outputs, "sst2", SEED)
    assert (measured.statistic, measured.ci_low, measured.ci_high) == (-0.01, -0.04, 0.02)


@dataclass(frozen=True)
class Table1F1(Metrics):  # a results type declaring a field the stage does not write
    stage = "table1"
    covers = Covers.SEED

    f1: float


def test_missing_inputs_fail_in_one_line(tmp_path, outputs):
    with pytest.raises(PipelineError, match=r"gap\.json is missing; run `dvc repro clark_coref`"):
        StageOutputs(tmp_path / "empty").read(GapMetrics)
    with pytest.raises(PipelineError, match=r"seed42\.json has no `f1` \(Table1F1\.f1\); re-run "):
        outputs.read(Table1F1, SEED)
    with pytest.raises(PipelineError, match=r"has no task `cola`; re-run `dvc repro table1`"):
        outputs.read(Table1Metrics, SEED).tasks["cola"]
    with pytest.raises(PipelineError, match=r"heads\.csv is missing; run `dvc repro ablate`"):
        StageOutputs(tmp_path / "empty").read(HeadRemovals, "sst2", 1)
    with pytest.raises(PipelineError, match=r"one per task and seed: read it with \(task, seed\)"):
        outputs.read(HeadRemovals, SEED)


def test_the_markdown_and_the_report_show_the_papers_number_beside_the_estimate(tmp_path, outputs):
    table, _ = claims_table(outputs)
    text = results_markdown(table)
    assert (
        "| `kovaleva.table1_order.sst2` | 0.115 | 0.115 (paper) | 0.100 [0.050, 0.150] | "
        "supported |" in text
    )
    assert "| `kovaleva.heads_removal_helps.sst2` |  | 0.012 (assumed) |" in text
    michel = "| `extension.prune_40_percent_small_cost.sst2` |  | 0.010 (this project's margin) |"
    assert michel in text
    assert text.index("Extensions") > text.index("`clark.probe_beats_right_branching`")
    _write(tmp_path, "plots/claims/claims.csv", table)
    page = render_report(tmp_path, "run", "seed: 42")
    headings = [part.split("</h2>")[0] for part in page.split("<h2>")[1:]]
    assert headings[0] == "Claims: the papers&#x27; findings tested on this run"
    assert page.count('<td class="not-testable">') == (table["verdict"] == "not testable").sum()
    assert page.index("<h3>Extensions</h3>") > page.index("<h3>The papers&#x27; findings</h3>")
    assert "not the papers' bert-base" in summary(table)


def test_a_model_barely_above_chance_on_the_ablation_rows_leaves_removal_claims_untested(
    tmp_path,
):
    build_outputs(tmp_path, roomy=False)  # baseline 0.55 [0.45, 0.65] against chance 0.5
    table, _ = claims_table(StageOutputs(tmp_path))
    rows = table.set_index("claim")
    for name in ("extension.prune_40_percent_small_cost.sst2", "kovaleva.heads_removal_helps.sst2"):
        assert rows.loc[name, "verdict"] == "not testable", name
        assert rows.loc[name, "reason"].startswith(
            "the sst2 model (seed 42) clears chance on the 96 ablation rows by a lower bound "
            "of -0.050 (accuracy 0.550 [0.450, 0.650], chance 0.500)"
        )
    assert rows.loc["kovaleva.last_layers_change_most.sst2", "verdict"] == "supported"


def test_the_power_effect_says_whether_it_is_the_papers(outputs):
    claims = {c.name: c for c in all_claims(outputs, ("sst2", "mrpc", "stsb", "rte"))}
    sst2 = claims["kovaleva.heads_removal_helps.sst2"]
    assert sst2.source.number is None and sst2.effect == pytest.approx(0.012)
    assert sst2.effect_source == "assumed: MRPC's +1.2, the largest best-head gain the paper prints"
    assert claims["kovaleva.heads_removal_helps.mrpc"].effect_source == ""  # printed
    assert "extension.layers_removal_helps.sst2" in claims  # the paper states RTE's alone
    assert claims["kovaleva.layers_removal_helps.rte"].source.number == pytest.approx(0.032)
    assert {
        "kovaleva.random_head_removal_helps.mrpc",
        "kovaleva.random_head_removal_helps.rte",
    } <= set(claims)
    assert "kovaleva.random_head_removal_helps.sst2" not in claims  # MRPC and RTE only


def test_a_verdict_says_a_note_that_is_its_reason_once():
    from pipeline.claims.table_markdown import _verdict

    same = pd.Series({"verdict": "contradicted", "reason": "below x", "note": "below x"})
    assert _verdict(same) == "**contradicted** (below x)"
    both = pd.Series({"verdict": "supported", "reason": "", "note": "3 heads"})
    assert _verdict(both) == "supported (3 heads)"
