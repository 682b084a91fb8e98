"""The claims table: each verdict rule on hand-made statistics, the readers' errors, and the
whole table on a hand-built outputs folder whose planted numbers decide every verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from pipeline.claims.kovaleva import best_removal, spread
from pipeline.claims.michel import pruned_cost
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import Beyond, Measured, SomeSignificant, largest, smallest
from pipeline.claims.table import (
    all_claims,
    by_seed,
    evaluate,
    flat_metrics,
    summary,
    with_seed_agreement,
)
from pipeline.core.errors import PipelineError
from pipeline.kovaleva.patterns import CLASSES
from pipeline.report.html import render_report

# --- rules --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("low", "high", "verdict"),
    [(0.01, 0.2, "supported"), (-0.3, -0.01, "contradicted"), (-0.1, 0.1, "inconclusive"),
     (0.0, 0.1, "inconclusive"), (-0.1, 0.0, "inconclusive")],
)  # fmt: skip
def test_beyond_above_zero(low, high, verdict):
    assert Beyond(0.0)(Measured((low + high) / 2, low, high)) == verdict


@pytest.mark.parametrize(
    ("low", "high", "verdict"),
    [(0.02, 0.08, "supported"), (0.11, 0.3, "contradicted"), (0.05, 0.15, "inconclusive")],
)
def test_beyond_below_a_threshold(low, high, verdict):
    assert Beyond(0.1, side="below")(Measured((low + high) / 2, low, high)) == verdict


def test_rules_describe_themselves():
    assert Beyond(0.5).describe() == "supported if ci_low > 0.5; contradicted if ci_high < 0.5"
    below = Beyond(0.1, side="below").describe()
    assert below == "supported if ci_high < 0.1; contradicted if ci_low > 0.1"


@pytest.mark.parametrize(
    ("significant", "max_ci_high", "verdict"),
    [(2, 0.3, "supported"), (0, 0.0, "contradicted"), (0, -0.02, "contradicted"),
     (0, 0.04, "inconclusive")],
)  # fmt: skip
def test_some_significant(significant, max_ci_high, verdict):
    measured = Measured(0.0, -0.1, 0.1, {"significant": significant, "max_ci_high": max_ci_high})
    assert SomeSignificant()(measured) == verdict


def test_smallest_and_largest_decide_like_every_interval():
    a, b = Measured(0.3, 0.1, 0.5), Measured(0.2, -0.05, 0.4)
    assert smallest(a, b) == Measured(0.2, -0.05, 0.4)
    assert Beyond(0.0)(smallest(a, b)) == "inconclusive"  # b straddles 0
    assert Beyond(0.0)(smallest(a, Measured(-0.2, -0.3, -0.1))) == "contradicted"
    assert largest(a, b) == Measured(0.3, 0.1, 0.5)
    nan = float("nan")
    assert smallest(a, Measured(nan, nan, nan)).undefined
    assert largest(Measured(nan, nan, nan), b).undefined


def test_an_undefined_statistic_is_inconclusive_and_keeps_only_its_verdict():
    nan = float("nan")
    undefined = Measured(nan, nan, nan, {"significant": 3, "max_ci_high": 1.0})
    assert undefined.undefined
    assert Beyond(0.0)(undefined) == "inconclusive"
    assert SomeSignificant()(undefined) == "inconclusive"
    table = pd.DataFrame(
        [{"claim": "x.y", "estimate": nan, "ci_low": nan, "ci_high": nan,
          "verdict": "inconclusive"}]
    )  # fmt: skip
    assert flat_metrics(table) == {
        "x.y.verdict": "inconclusive",
        "verdicts.supported": 0,
        "verdicts.contradicted": 0,
        "verdicts.inconclusive": 1,
    }


def test_measured_rejects_a_broken_interval():
    with pytest.raises(ValueError):
        Measured(0.1, 0.2, 0.0)
    with pytest.raises(ValueError):
        Measured(float("nan"), 0.0, 1.0)  # only a wholly undefined statistic is allowed


def test_spread_by_interval_arithmetic():
    shares = [Measured(0.60, 0.55, 0.65), Measured(0.40, 0.38, 0.42), Measured(0.5, 0.45, 0.56)]
    result = spread(shares)
    assert result.statistic == pytest.approx(0.20)
    assert result.ci_low == pytest.approx(0.55 - 0.42)
    assert result.ci_high == pytest.approx(0.65 - 0.38)
    overlapping = spread([Measured(0.5, 0.4, 0.6), Measured(0.52, 0.45, 0.62)])
    assert overlapping.ci_low == 0.0


def test_best_removal_counts_significant_gains():
    table = pd.DataFrame(
        {"delta": [0.04, -0.02, 0.01, 0.0], "ci_low": [0.01, -0.05, -0.01, 0.0],
         "ci_high": [0.07, 0.0, 0.03, 0.0], "q_value": [0.01, 0.02, 0.30, 1.0]}
    )  # fmt: skip
    best = best_removal(table)
    assert (best.statistic, best.ci_low, best.ci_high) == (0.04, 0.01, 0.07)
    assert best.evidence == {"significant": 1, "max_ci_high": 0.07}  # the hurting one is not


# --- a hand-built outputs folder ------------------------------------------------------------

TASKS = ("sst2", "rte")
SEED = 42


def _interval(key: str, estimate: float, low: float, high: float) -> dict[str, float]:
    return {key: estimate, f"{key}_ci_low": low, f"{key}_ci_high": high}


def _write(root: Path, relative: str, data) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, pd.DataFrame):
        data.to_csv(path, index=False)
    else:
        path.write_text(json.dumps(data))


def _ablation(delta_best: float, q_best: float) -> pd.DataFrame:
    return pd.DataFrame(
        {"layer": [1, 1, 2], "head": [1, 2, 1], "delta": [delta_best, 0.0, -0.02],
         "ci_low": [delta_best - 0.03, 0.0, -0.05], "ci_high": [delta_best + 0.03, 0.0, 0.01],
         "q_value": [q_best, 1.0, 0.5]}
    )  # fmt: skip


def build_outputs(root: Path, seed: int = SEED, sst2_ahead: float = 0.10) -> None:
    """Planted numbers of fine-tuning seed `seed`: every claim's verdict below is decided by
    them (`sst2_ahead`: SST-2's finetuned - random_init, interval +-0.05)."""
    table1, patterns = {}, {}
    folder = f"seed{seed}"
    for task in TASKS:
        # sst2 follows Table 1's order; rte's random init beats pre-training + fine-tuning
        first = (
            (sst2_ahead, sst2_ahead - 0.05, sst2_ahead + 0.05)
            if task == "sst2"
            else (-0.10, -0.15, -0.05)
        )
        table1 |= _interval(f"{task}.finetuned_minus_random_init", *first)
        table1 |= _interval(f"{task}.random_init_minus_pretrained", 0.2, 0.1, 0.3)
        for condition in ("pretrained", "finetuned"):
            prefix = f"{task}.{condition}"
            patterns |= _interval(f"{prefix}.vertical_margin", 0.3, 0.25, 0.35)
            for kind in CLASSES:
                share = 0.5 if kind == "vertical" else 0.125
                patterns |= _interval(f"{prefix}.{kind}", share, share - 0.01, share + 0.01)
        patterns |= _interval(f"{task}.finetuned.vertical_on_special", 0.55, 0.45, 0.65)
        _write(
            root,
            f"metrics/analyze/{task}/{folder}.json",
            {"cosine.L3": 0.7} | _interval("cosine.last_two_margin", 0.1, 0.05, 0.2),
        )
        _write(
            root,
            f"metrics/clark_heads/{task}/{folder}.json",
            _interval("same_layer_margin", 0.05, 0.02, 0.08),
        )
        _write(
            root,
            f"metrics/measures/{task}/{folder}.json",
            _interval("special_norms_over_weights", 0.25, 0.2, 0.3),
        )
        seeded = f"plots/ablate/{task}/{folder}"
        _write(root, f"{seeded}/heads.csv", _ablation(0.06, 0.01 if task == "sst2" else 0.4))
        layers = pd.DataFrame(
            {
                "layer": [1, 2],
                "delta": [0.0, -0.1],
                "ci_low": [0.0, -0.2],
                "ci_high": [0.0, -0.02],
                "q_value": [1.0, 0.01],
            }
        )  # fmt: skip: no layer's interval reaches above 0
        _write(root, f"{seeded}/layers.csv", layers)
        pruning = pd.DataFrame(
            {"fraction_pruned": [0.0, 0.3, 0.42, 0.5], "delta": [0.0, 0.0, -0.01, -0.2],
             "delta_ci_low": [0.0, -0.02, -0.04, -0.3], "delta_ci_high": [0.0, 0.02, 0.02, -0.1]}
        )  # fmt: skip
        _write(root, f"{seeded}/pruning.csv", pruning)
    _write(root, f"metrics/table1/{folder}.json", table1)
    _write(root, f"metrics/patterns_apply/{folder}.json", patterns)
    _write(root, "metrics/framenet.json", _interval("top1_over_median", 3.0, 2.5, 3.5))
    ud = _interval("nsubj_head_minus_offset", 0.2, 0.1, 0.3)
    ud |= _interval("punct_head_minus_offset", 0.02, -0.03, 0.07)
    ud |= _interval("probe_minus_right_branching", 0.2, 0.15, 0.25)
    _write(root, "metrics/clark_syntax/ud.json", ud | {"probe_uas": 0.5})
    _write(root, "metrics/clark_coref/gap.json", _interval("head_minus_nearest", 0.1, 0.02, 0.18))


EXPECTED = {
    "kovaleva.table1_order.sst2": "supported",
    "kovaleva.table1_order.rte": "contradicted",
    "kovaleva.vertical_most_frequent.rte.pretrained": "supported",
    "kovaleva.shares_similar_across_tasks.finetuned": "supported",
    "kovaleva.vertical_is_special_tokens.sst2": "inconclusive",
    "kovaleva.last_layers_change_most.rte": "supported",
    "kovaleva.heads_removal_helps.sst2": "supported",
    "kovaleva.heads_removal_helps.rte": "inconclusive",
    "kovaleva.layers_removal_helps.sst2": "contradicted",
    "kovaleva.framenet_heads_stand_out": "supported",
    "clark.head_beats_offset.nsubj": "supported",
    "clark.head_beats_offset.punct": "inconclusive",
    "clark.coref_head_beats_nearest": "supported",
    "clark.probe_beats_right_branching": "supported",
    "clark.same_layer_heads_alike.sst2": "supported",
    "michel.prune_40_percent_small_cost.sst2": "supported",
    "kobayashi.special_tokens_survive_norms.rte": "contradicted",
}


@pytest.fixture
def outputs(tmp_path) -> StageOutputs:
    build_outputs(tmp_path)
    return StageOutputs(tmp_path)


def test_every_planted_verdict(outputs):
    table = evaluate(all_claims(outputs, TASKS, SEED), outputs)
    verdicts = dict(zip(table["claim"], table["verdict"], strict=True))
    assert {name: verdicts[name] for name in EXPECTED} == EXPECTED
    assert table["claim"].is_unique
    assert (table["ci_low"] <= table["estimate"]).all()
    assert (table["estimate"] <= table["ci_high"]).all()


def test_flat_metrics_keys(outputs):
    table = evaluate(all_claims(outputs, TASKS, SEED), outputs)
    metrics = flat_metrics(table)
    name = "kovaleva.table1_order.rte"
    assert metrics[f"{name}.statistic"] == pytest.approx(-0.10)
    assert metrics[f"{name}.ci_low"] == pytest.approx(-0.15)
    assert metrics[f"{name}.ci_high"] == pytest.approx(-0.05)
    assert metrics[f"{name}.verdict"] == "contradicted"
    assert sum(
        metrics[f"verdicts.{v}"] for v in ("supported", "contradicted", "inconclusive")
    ) == len(table)


def test_a_model_of_two_layers_has_no_last_layers_claim_to_test(tmp_path, outputs):
    _write(tmp_path, "metrics/analyze/sst2/seed42.json", {"cosine.L1": 0.9, "cosine.L2": 0.8})
    claim = next(c for c in all_claims(outputs, TASKS, SEED) if c.name.endswith("most.sst2"))
    measured = claim.measure(outputs)
    assert measured.undefined and claim.rule(measured) == "inconclusive"


def test_no_vertical_maps_leave_the_special_token_claim_untested(tmp_path, outputs):
    patterns = json.loads((tmp_path / "metrics/patterns_apply/seed42.json").read_text())
    for suffix in ("", "_ci_low", "_ci_high"):
        del patterns[f"rte.finetuned.vertical_on_special{suffix}"]
    patterns["rte.finetuned.vertical"] = 0.0
    _write(tmp_path, "metrics/patterns_apply/seed42.json", patterns)
    claim = next(c for c in all_claims(outputs, TASKS, SEED) if c.name.endswith("tokens.rte"))
    assert claim.measure(outputs).undefined
    patterns["rte.finetuned.vertical"] = 0.3  # vertical maps but no statistic: an error
    _write(tmp_path, "metrics/patterns_apply/seed42.json", patterns)
    with pytest.raises(PipelineError, match=r"has no `rte\.finetuned\.vertical_on_special`"):
        claim.measure(StageOutputs(tmp_path))  # a fresh reader: each reads a file once


def test_pruned_cost_reads_the_point_nearest_forty_percent(outputs):
    assert pruned_cost(outputs, "sst2", SEED) == Measured(-0.01, -0.04, 0.02)


def test_missing_inputs_fail_in_one_line(tmp_path, outputs):
    with pytest.raises(PipelineError, match=r"framenet_data\.json is missing"):
        outputs.metrics("framenet_data")
    with pytest.raises(PipelineError, match=r"has no `top5.score`; re-run `dvc repro framenet`"):
        outputs.interval(("framenet",), "top5.score")
    with pytest.raises(PipelineError, match=r"run `dvc repro ablate` first"):
        StageOutputs(tmp_path / "empty").table("ablate", "sst2", "seed1", "heads")


def test_verdicts_are_compared_across_seeds(tmp_path, outputs):
    build_outputs(tmp_path, seed=7, sst2_ahead=-0.10)  # seed 7 reverses SST-2's Table 1 order
    tables = {s: evaluate(all_claims(outputs, TASKS, s), outputs) for s in (SEED, 7)}
    seeds = by_seed(tables)
    assert len(seeds) == 2 * len(tables[SEED]) and set(seeds["seed"]) == {SEED, 7}
    table = with_seed_agreement(tables[SEED], seeds)
    agree = table.set_index("claim")["seeds_same_verdict"]
    assert agree["kovaleva.table1_order.sst2"] == 1  # supported in 42, contradicted in 7
    assert (agree.drop("kovaleva.table1_order.sst2") == 2).all() and (table["seeds"] == 2).all()
    metrics = flat_metrics(table)
    assert metrics["verdicts.seeds"] == 2
    assert metrics["verdicts.same_in_every_seed"] == len(table) - 1
    assert metrics["kovaleva.table1_order.sst2.verdict"] == "supported"  # the primary seed's
    assert "all 2 fine-tuning seeds" in summary(table)


def test_the_report_opens_with_the_claims(tmp_path, outputs):
    table = evaluate(all_claims(outputs, TASKS, SEED), outputs)
    table = with_seed_agreement(table, by_seed({SEED: table}))
    _write(tmp_path, "plots/claims/claims.csv", table)
    page = render_report(tmp_path, "run", "seed: 42")
    headings = [part.split("</h2>")[0] for part in page.split("<h2>")[1:]]
    assert headings[0] == "Claims: the papers&#x27; findings tested on this run"
    assert page.count('<td class="contradicted">') == (table["verdict"] == "contradicted").sum()
