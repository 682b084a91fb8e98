"""Pattern-type shares corrected for the classifier (adjusted classify-and-count) against
hand computations, and the type-share claim built on them."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta

from pipeline.analyses.patterns_apply.claims import heterogeneous_minority, type_shares, types_recur
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.shares import (
    adjusted_shares,
    corrected_shares,
    design_effects,
    design_weights,
    error_rates,
    example_counts,
    resampled_counts,
    separation,
    side_rates,
)
from pipeline.core.errors import PipelineError
from pipeline.kovaleva.patterns import CLASSES


def confusion_counts(actual, predicted, classes) -> np.ndarray:
    """C [K, K]: maps labelled classes[i] that the classifier called classes[j]."""
    return example_counts(actual, predicted, np.arange(len(actual)), classes).sum(0)


# Ten maps labelled a: 8 called a, 2 called b; ten labelled b: 1 called a, 9 called b.
ACTUAL = ["a"] * 10 + ["b"] * 10
PREDICTED = ["a"] * 8 + ["b"] * 2 + ["a"] * 1 + ["b"] * 9


def test_error_rates_are_the_rows_of_the_confusion_matrix():
    counts = confusion_counts(ACTUAL, PREDICTED, ["a", "b", "c"])
    assert counts.tolist() == [[8, 2, 0], [1, 9, 0], [0, 0, 0]]
    rates = error_rates(counts)
    assert rates[:2] == pytest.approx(np.array([[0.8, 0.2, 0], [0.1, 0.9, 0]]))
    assert np.isnan(rates[2]).all()  # no map labelled c


def test_two_types_give_the_textbook_adjusted_count():
    """True shares 0.3 / 0.7 are called a 0.8 x 0.3 + 0.1 x 0.7 = 0.31 of the time; the
    adjusted count (q - fpr) / (tpr - fpr) = (0.31 - 0.1) / (0.8 - 0.1) gives 0.3 back."""
    rates = error_rates(confusion_counts(ACTUAL, PREDICTED, ["a", "b"]))
    assert adjusted_shares(np.array([0.31, 0.69]), rates) == pytest.approx([0.3, 0.7], abs=1e-6)


def test_three_types_recover_the_true_shares_and_stay_on_the_simplex():
    rates = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]])
    truth = np.array([0.5, 0.3, 0.2])
    assert adjusted_shares(rates.T @ truth, rates) == pytest.approx(truth, abs=1e-6)
    # observed shares no true shares give (a share below its errors): clipped at 0, sum 1
    clipped = adjusted_shares(np.array([0.05, 0.9, 0.05]), rates)
    assert clipped.min() >= 0 and clipped.sum() == pytest.approx(1)


def test_separation_is_recall_minus_the_pooled_false_positive_rate():
    counts = confusion_counts(ACTUAL, PREDICTED, ["a", "b"])
    # a: recall 0.8, one of ten b maps called a (0.1); b: recall 0.9, false positives 0.2
    assert separation(counts) == pytest.approx([0.7, 0.7])


def _labelled(recalled_c: int) -> tuple[list[str], list[str]]:
    """100 maps each of a and b (90 recalled), 20 of c of which `recalled_c` are recalled
    and the rest called a."""
    actual = ["a"] * 100 + ["b"] * 100 + ["c"] * 20
    predicted = (
        ["a"] * 90 + ["b"] * 10 + ["b"] * 90 + ["a"] * 10
        + ["c"] * recalled_c + ["a"] * (20 - recalled_c)
    )  # fmt: skip
    return actual, predicted


EXAMPLES = [f"e{i}" for i in range(220)]  # each of `_labelled`'s maps from its own example


def _shares(recalled_c: int, observed, seed_change: float = 0.0):
    observed = np.asarray(observed)
    actual, predicted = _labelled(recalled_c)
    return corrected_shares(
        observed, observed - 0.01, observed + 0.01, actual, predicted, EXAMPLES,
        ("a", "b", "c"), seed_change, resamples=300, seed=0,
    )  # fmt: skip


def test_a_type_never_recalled_cannot_be_identified_and_gets_no_share():
    found = _shares(0, [0.6, 0.4, 0.0])
    assert found.identifiable.tolist() == [True, True, False]
    assert np.isnan(found.corrected[2]) and np.isnan(found.ci_low[2])
    assert found.recalled.tolist() == [90, 90, 0] and found.labelled.tolist() == [100, 100, 20]
    assert found.corrected[:2] == pytest.approx(
        adjusted_shares(
            np.array([0.6, 0.4, 0.0]), error_rates(confusion_counts(*_labelled(0), "abc"))[:2]
        )
    )


def test_a_type_without_labelled_maps_is_not_identifiable():
    actual, predicted = _labelled(0)
    found = corrected_shares(
        np.array([0.6, 0.4, 0.0]), np.array([0.59, 0.39, 0.0]), np.array([0.61, 0.41, 0.01]),
        actual[:200], predicted[:200], EXAMPLES[:200], ("a", "b", "c"), 0.0, resamples=100,
        seed=0,
    )  # fmt: skip
    assert found.identifiable.tolist() == [True, True, False]
    assert found.labelled[2] == 0 and np.isnan(found.corrected[2])
    assert found.false_positive[:2] == pytest.approx([0.1, 0.1])


def test_the_interval_holds_the_estimate_and_widens_with_the_classifier_seed():
    steady = _shares(18, [0.5, 0.3, 0.2])
    assert steady.identifiable.all()
    assert (steady.ci_low <= steady.corrected).all() and (steady.corrected <= steady.ci_high).all()
    shaky = _shares(18, [0.5, 0.3, 0.2], seed_change=0.05)
    assert ((shaky.ci_high - shaky.ci_low) > (steady.ci_high - steady.ci_low)).all()


def test_one_type_alone_with_an_unstable_classifier_still_gets_an_interval():
    """All maps of one type and a classifier whose seeds disagree a lot (a random model's
    maps): some joint draws clip every share to 0; they carry no composition and are left
    out, so the interval stays finite."""
    found = _shares(18, [1.0, 0.0, 0.0], seed_change=0.9)
    assert np.isfinite(found.ci_low).all() and np.isfinite(found.ci_high).all()
    assert (found.ci_low <= found.corrected + 1e-12).all()


def test_a_share_within_the_classifiers_errors_is_unresolved():
    """10% of a and b maps are called the other: an observed b share of 0.08 is what 0.8 of
    pure a maps give (0.1 x 0.8): b's corrected share reaches 0."""
    found = _shares(18, [0.9, 0.08, 0.02])
    assert "b" in found.unresolved() and "a" not in found.unresolved()
    assert found.false_positive[1] == pytest.approx(10 / 120)  # 10 of the 120 a and c maps


def _examples_of(size: int, count: int) -> list[str]:
    """`count` map's examples, `size` consecutive maps each."""
    return [f"e{i // size}" for i in range(count)]


def test_resampling_draws_whole_examples():
    """Three maps an example, all labelled a; an example's maps are all called a or all b:
    every resample counts a multiple of three maps in each cell."""
    actual = ["a"] * 30
    predicted = ["a"] * 18 + ["b"] * 12
    per_example = example_counts(actual, predicted, _examples_of(3, 30), ["a", "b"])
    assert per_example.shape == (10, 2, 2) and per_example.sum(0)[0].tolist() == [18, 12]
    drawn = resampled_counts(per_example, 200, np.random.default_rng(0))  # [200, 2, 2]
    assert (drawn.sum((1, 2)) == 30).all() and (drawn % 3 == 0).all()
    assert len(np.unique(drawn[:, 0, 0])) > 3  # the draws differ


def test_the_design_effect_is_one_for_maps_of_their_own_examples_and_grows_with_clusters():
    """Ten examples of four maps labelled a, each example's maps all called a or all b (5
    and 5): the rate's variance between examples is E m / (E - 1) = 40/9 times that of
    independent maps (n - 1 = 39 in its denominator). One map an example: exactly 1."""
    actual, predicted = ["a"] * 40, ["a"] * 20 + ["b"] * 20
    clustered = example_counts(actual, predicted, _examples_of(4, 40), ["a", "b"])
    alone = example_counts(actual, predicted, _examples_of(1, 40), ["a", "b"])
    assert design_effects(clustered)[0] == pytest.approx(40 / 9 * 39 / 40)
    assert design_effects(alone).tolist() == [1.0, 1.0]  # b has no maps: 1


def test_each_side_draws_the_rates_exact_confidence_distribution():
    """Two types, type a's row 5 of 20 recalled: its upper bound draws the recall from
    Beta(5, 16), whose 2.5th percentile is the exact (Clopper-Pearson) lower bound; its
    lower bound draws it from Beta(6, 15), whose 97.5th percentile is the exact upper
    bound; b's row (3 of 100 called a) alike."""
    counts = np.array([[5.0, 15.0], [3.0, 97.0]])
    rng = np.random.default_rng(0)
    high = side_rates(counts, 0, 0, True, 200_000, rng)  # [B, 2, 2]
    low = side_rates(counts, 0, 0, False, 200_000, rng)
    assert np.percentile(high[:, 0, 0], 2.5) == pytest.approx(beta.ppf(0.025, 5, 16), rel=0.02)
    assert np.percentile(low[:, 0, 0], 97.5) == pytest.approx(beta.ppf(0.975, 6, 15), rel=0.02)
    assert np.percentile(high[:, 1, 0], 2.5) == pytest.approx(beta.ppf(0.025, 3, 98), rel=0.03)
    assert np.percentile(low[:, 1, 0], 97.5) == pytest.approx(beta.ppf(0.975, 4, 97), rel=0.02)
    assert np.allclose(high.sum(-1), 1) and np.allclose(low.sum(-1), 1)


def test_the_other_rows_share_one_pseudo_count_for_a_type_with_no_false_positives():
    """Three types, none ever called c by mistake: c's lower bound draws the others' c cells
    from one pseudo-count split between the two rows, not one each."""
    counts = np.array([[50.0, 0.0, 0.0], [0.0, 50.0, 0.0], [0.0, 0.0, 50.0]])
    low = side_rates(counts, 2, 2, False, 100_000, np.random.default_rng(0))
    assert low[:, 0, 2].mean() == pytest.approx(0.5 / 50.5, rel=0.03)
    high = side_rates(counts, 2, 2, True, 100, np.random.default_rng(0))
    assert (high[:, :2, 2] == 0).all()  # no pseudo-count, no false positive: exactly 0


def test_maps_that_cluster_by_example_widen_the_interval():
    """The same labels, each map from its own example, then five consecutive maps (alike
    by eye and by the classifier) an example: fewer effective maps, a wider interval (c's
    20 maps in 4 examples are then too few to identify it)."""
    actual, predicted = _labelled(18)
    observed = np.array([0.5, 0.3, 0.2])
    widths = []
    for examples in (_examples_of(1, 220), _examples_of(5, 220)):
        found = corrected_shares(
            observed, observed - 0.01, observed + 0.01, actual, predicted, examples,
            ("a", "b", "c"), 0.0, resamples=400, seed=0,
        )  # fmt: skip
        widths.append(found.ci_high - found.ci_low)
    assert (widths[1][:2] > 1.5 * widths[0][:2]).all()  # a and b: 100 maps, 20 examples


def _outputs(
    tmp_path, recalled_block: int, shares: dict[str, float], task: str = "mrpc"
) -> StageOutputs:
    """A patterns_apply metrics file (seed 42, `task`) and cross-validated predictions on
    two-sentence (MRPC) maps: 50 maps of each type, 48 recalled (2 called vertical,
    vertical's called diagonal), but block's: `recalled_block` of 12 recalled, the rest
    called vertical. Beside them, 50 one-sentence (SST-2) maps of each other type, all
    recalled."""
    metrics = {"seed_stability.max_share_change": 0.005}
    for kind, share in shares.items():
        key = f"{task}.finetuned.{kind}"
        metrics |= {key: share, f"{key}_ci_low": share - 0.005, f"{key}_ci_high": share + 0.005}
    rows = [("mrpc", k, k if i < 48 else "diagonal" if k == "vertical" else "vertical")
            for k in CLASSES if k != "block" for i in range(50)]  # fmt: skip
    rows += [("mrpc", "block", "block" if i < recalled_block else "vertical") for i in range(12)]
    rows += [("sst2", k, k) for k in CLASSES if k != "block" for i in range(50)]
    frame = pd.DataFrame(rows, columns=["task", "visual", "cnn"])
    frame = frame.assign(variant="finetuned", rule=frame["visual"], round=1)  # rule-stratified
    per_stratum = frame.groupby(["task", "variant", "rule"]).size()  # the run's: weights 1
    metrics |= {f"{t}.{v}.rule_maps.{r}": int(n) for (t, v, r), n in per_stratum.items()}
    (tmp_path / "metrics" / "patterns_apply").mkdir(parents=True)
    (tmp_path / "metrics" / "patterns_apply" / "seed42.json").write_text(json.dumps(metrics))
    (tmp_path / "plots" / "patterns_train").mkdir(parents=True)
    frame.assign(map_id=[f"m{i}" for i in range(len(frame))], example_id=range(len(frame))).to_csv(
        tmp_path / "plots" / "patterns_train" / "cross_validation.csv", index=False
    )
    (tmp_path / "plots" / "framenet").mkdir(parents=True)  # 100 heads: one head's share 0.01
    heads = pd.DataFrame(
        {"head": range(100), "score": 0.5, "score_ci_low": 0.4, "score_ci_high": 0.6}
    )
    heads.to_csv(tmp_path / "plots/framenet/heads.csv", index=False)
    return StageOutputs(tmp_path)


SHARES = {"vertical": 0.6, "diagonal": 0.1, "vertical+diagonal": 0.1, "block": 0.1,
          "heterogeneous": 0.1}  # fmt: skip


def test_a_type_the_classifier_cannot_identify_makes_the_claim_not_testable(tmp_path):
    claim = types_recur("mrpc")
    measured = claim.measure(_outputs(tmp_path, 0, SHARES), 42)
    assert claim.rule(measured) == "not testable"
    assert measured.note.startswith(
        "the classifier cannot identify block (12 maps labelled by eye, 0 of them recalled"
    )
    assert "; the others' corrected shares: vertical 0." in measured.note


def test_the_claim_judges_the_smallest_corrected_share_of_all_five(tmp_path):
    claim = types_recur("mrpc")
    measured = claim.measure(_outputs(tmp_path, 12, SHARES), 42)
    assert claim.rule(measured) == "supported" and measured.note == ""
    found = type_shares(_outputs(tmp_path / "again", 12, SHARES), "mrpc", 42)
    assert measured.statistic == pytest.approx(100 * np.nanmin(found.corrected))  # in heads
    assert measured.ci_low == pytest.approx(100 * found.ci_low.min())


def test_a_share_the_classifier_cannot_resolve_says_so(tmp_path):
    """Diagonal observed at 0.02, less than the 4% of vertical maps called diagonal."""
    shares = SHARES | {"vertical": 0.68, "diagonal": 0.02}
    measured = types_recur("mrpc").measure(_outputs(tmp_path, 12, shares), 42)
    assert measured.note == (
        "below what the classifier resolves: diagonal (the classifier calls 1.2% of other "
        "maps diagonal)"
    )  # 2 of the 162 maps of the other types (vertical's) are called diagonal


def test_on_one_sentence_inputs_the_claim_covers_four_types_corrected_on_their_own_maps(
    tmp_path,
):
    """SST-2's inputs are single sentences: block cannot occur, and the errors that correct
    its shares are those on the one-sentence maps (none here), not the two-sentence maps'."""
    shares = {"vertical": 0.55, "diagonal": 0.15, "vertical+diagonal": 0.2, "heterogeneous": 0.1}
    claim = types_recur("sst2")
    assert claim.finding.startswith("each of the four pattern types a single sentence can show")
    found = type_shares(_outputs(tmp_path, 0, shares, task="sst2"), "sst2", 42)
    assert found.classes == tuple(k for k in CLASSES if k != "block")
    assert found.labelled.tolist() == [50, 50, 50, 50]  # the one-sentence maps alone
    np.testing.assert_allclose(found.corrected, list(shares.values()), atol=1e-6)
    measured = claim.measure(_outputs(tmp_path / "again", 0, shares, task="sst2"), 42)
    assert claim.rule(measured) == "supported"  # block's lack of recall does not count here
    assert measured.statistic == pytest.approx(100 * 0.1, abs=1e-5)  # in heads' worth


def test_the_heterogeneous_row_reads_the_corrected_share_against_half(tmp_path):
    """MRPC's row carries the paper's 32%; a heterogeneous share of 0.1 is a minority. With
    block unidentified (none of its 12 maps recalled) the share is still measured, block
    taken as absent, and the note says so."""
    claim = heterogeneous_minority("mrpc")
    assert claim.source.number == 0.32 and claim.rule.side == "below"
    measured = claim.measure(_outputs(tmp_path, 12, SHARES), 42)
    found = type_shares(_outputs(tmp_path / "again", 12, SHARES), "mrpc", 42)
    het = found.classes.index("heterogeneous")
    assert measured.statistic == pytest.approx(found.corrected[het])
    assert claim.rule(measured) == "supported" and measured.note == ""
    blind = claim.measure(_outputs(tmp_path / "blind", 0, SHARES), 42)
    assert not blind.undefined and claim.rule(blind) == "supported"
    assert blind.note.startswith("the classifier cannot identify block")
    assert blind.note.endswith("the heterogeneous share is solved with it taken as absent")


def test_labelled_maps_without_their_examples_fail_in_one_line(tmp_path):
    out = _outputs(tmp_path, 12, SHARES)
    table = tmp_path / "plots" / "patterns_train" / "cross_validation.csv"
    pd.read_csv(table).drop(columns="example_id").to_csv(table, index=False)
    with pytest.raises(
        PipelineError, match=r"has no column `example_id`.*dvc repro patterns_train"
    ):
        type_shares(out, "mrpc", 42)


def test_a_one_sentence_map_labelled_block_fails_in_one_line(tmp_path):
    out = _outputs(tmp_path, 12, SHARES)
    table = tmp_path / "plots" / "patterns_train" / "cross_validation.csv"
    frame = pd.read_csv(table)
    frame.loc[frame["task"].eq("sst2").idxmax(), "visual"] = "block"
    frame.to_csv(table, index=False)
    with pytest.raises(PipelineError, match=r"labelled map m\d+ of sst2 is 'block' by eye"):
        type_shares(out, "sst2", 42)


def test_design_weights_are_each_strata_maps_in_the_run_over_its_labelled_maps():
    weights = design_weights(["a", "a", "b"], {"a": 10.0, "b": 30.0, "c": 0.0})
    np.testing.assert_allclose(weights, [5.0, 5.0, 30.0])
    np.testing.assert_allclose(design_weights(["a", "b"], {"a": 4.0}), [4.0, 0.0])
    with pytest.raises(ValueError, match=r"no labelled map of stratum c .*rule-stratified round"):
        design_weights(["a", "b"], {"a": 1.0, "c": 2.0})


def _two_strata() -> tuple[list[str], list[str], np.ndarray]:
    """Twenty maps of a: 10 of stratum s (all called a), 10 of stratum t (5 called a); 40
    maps of b, 20 of each stratum, all called b; each map from its own example."""
    actual = ["a"] * 20 + ["b"] * 40
    predicted = ["a"] * 15 + ["b"] * 5 + ["b"] * 40
    strata = np.array(["s"] * 10 + ["t"] * 10 + ["s"] * 20 + ["t"] * 20)
    return actual, predicted, strata


def test_weighted_error_rates_are_the_populations_by_hand():
    """Stratum s holds 30 maps of the run, t 270 (weights 1 and 9): a's recall over the
    run's maps is (10 x 1 + 10 x 9 x 0.5) / (10 + 90) = 0.55, not the labelled maps' 0.75."""
    actual, predicted, strata = _two_strata()
    weights = design_weights(strata, {"s": 30.0, "t": 270.0})
    observed = np.array([0.3, 0.7])
    found = corrected_shares(
        observed, observed - 0.01, observed + 0.01, actual, predicted,
        np.arange(60).astype(str), ("a", "b"), 0.0, resamples=200, seed=0, weights=weights,
    )  # fmt: skip
    assert found.separation[0] == pytest.approx(0.55)  # no b map is called a
    assert found.corrected[0] == pytest.approx(0.3 / 0.55)
    assert found.labelled.tolist() == [20, 40] and found.recalled.tolist() == [15, 40]
    unweighted = corrected_shares(
        observed, observed - 0.01, observed + 0.01, actual, predicted,
        np.arange(60).astype(str), ("a", "b"), 0.0, resamples=200, seed=0,
    )  # fmt: skip
    assert unweighted.separation[0] == pytest.approx(0.75)


def test_equal_weights_leave_everything_as_unweighted_and_unequal_ones_widen():
    """Weights all 3 change nothing (each row's effective count is still its maps); weights
    1 and 9 leave a's maps fewer effective ones (Kish: 100² / (10 + 810) = 12.2 of 20), so
    a's interval is wider."""
    actual, predicted, strata = _two_strata()
    observed = np.array([0.3, 0.7])
    args = (observed, observed - 0.01, observed + 0.01, actual, predicted,
            np.arange(60).astype(str), ("a", "b"), 0.0, 400, 1)  # fmt: skip
    plain = corrected_shares(*args)
    alike = corrected_shares(*args, weights=np.full(60, 3.0))
    for field in ("corrected", "ci_low", "ci_high", "separation_low", "false_positive_low"):
        np.testing.assert_allclose(getattr(alike, field), getattr(plain, field), rtol=1e-9)
    uneven = corrected_shares(*args, weights=design_weights(strata, {"s": 30.0, "t": 270.0}))
    even = corrected_shares(*args, weights=design_weights(strata, {"s": 100.0, "t": 100.0}))
    assert uneven.ci_high[0] - uneven.ci_low[0] > even.ci_high[0] - even.ci_low[0]


def test_the_error_rates_rest_on_the_rule_stratified_round_weighted_by_the_runs_maps(tmp_path):
    """A later round of 40 vertical maps all called diagonal leaves the shares as they were;
    the run holding 9 times as many of a stratum's maps weighs its labelled maps 9 times."""
    out = _outputs(tmp_path, 12, SHARES)
    before = type_shares(out, "mrpc", 42)
    table = tmp_path / "plots" / "patterns_train" / "cross_validation.csv"
    frame = pd.read_csv(table)
    later = pd.DataFrame({"task": "mrpc", "visual": "vertical", "cnn": "diagonal",
                          "variant": "finetuned", "rule": "vertical", "round": 2,
                          "map_id": [f"n{i}" for i in range(40)],
                          "example_id": range(1000, 1040)})  # fmt: skip
    pd.concat([frame, later]).to_csv(table, index=False)
    after = type_shares(StageOutputs(tmp_path), "mrpc", 42)
    np.testing.assert_allclose(after.corrected, before.corrected)
    assert after.labelled.tolist() == before.labelled.tolist()
    path = tmp_path / "metrics" / "patterns_apply" / "seed42.json"
    metrics = json.loads(path.read_text())
    metrics["mrpc.finetuned.rule_maps.vertical"] *= 9
    path.write_text(json.dumps(metrics))
    heavier = type_shares(StageOutputs(tmp_path), "mrpc", 42)
    diagonal = heavier.classes.index("diagonal")
    # the other types' maps called diagonal are vertical's 2, now weighing 9 each, among
    # vertical's 50 x 9, vertical+diagonal's and heterogeneous's 50 and block's 12
    assert heavier.false_positive[diagonal] == pytest.approx(2 * 9 / (50 * 9 + 50 + 50 + 12))
    assert before.false_positive[diagonal] == pytest.approx(2 / (50 + 50 + 50 + 12))


def test_a_run_without_its_maps_by_rule_class_leaves_the_share_claims_not_testable(tmp_path):
    out = _outputs(tmp_path, 12, SHARES)
    path = tmp_path / "metrics" / "patterns_apply" / "seed42.json"
    metrics = json.loads(path.read_text())
    path.write_text(json.dumps({k: v for k, v in metrics.items() if ".rule_maps." not in k}))
    with pytest.raises(PipelineError, match=r"count no map by the rule.s class.*rerun it"):
        type_shares(out, "mrpc", 42)
    for claim in (types_recur("mrpc"), heterogeneous_minority("mrpc")):
        measured = claim.measure(out, 42)
        assert claim.rule(measured) == "not testable"
        assert measured.note.startswith("patterns_apply's metrics of seed 42 do not count")
