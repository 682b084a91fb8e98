"""95% intervals of the Clark et al. analyses: relation heads against fixed offsets, the
probe against the right-branching parse, the coreference head against the nearest name,
and the same-layer margin of the head clustering."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from pipeline.clark.clustering import js_divergence_sum, layer_pair_means, same_layer_margin
from pipeline.clark.coref import SplitScores, best_against_nearest
from pipeline.clark.probe import probe_example, right_branching_hits, uas
from pipeline.clark.relations import ALL, ArcOutcomes, hits_per_sentence, select_and_report
from pipeline.clark.syntax import INTERVAL_COLUMNS, relation_metrics, with_intervals
from pipeline.clark.ud import Sentence


def sentence(heads: tuple[int, ...], relations: tuple[str, ...], upos=None) -> Sentence:
    upos = upos or ("X",) * len(heads)
    return Sentence("s", ("w",) * len(heads), heads, relations, upos)


def word_maps_to(targets: list[np.ndarray]) -> torch.Tensor:
    """Word maps [1, K, w + 2, w + 2]: head k sends word j (1-based) to targets[k][j - 1]."""
    w = len(targets[0])
    maps = torch.zeros(1, len(targets), w + 2, w + 2)
    for k, target in enumerate(targets):
        maps[0, k, 0, 0] = maps[0, k, -1, -1] = 1.0
        for j, i in enumerate(target, start=1):
            maps[0, k, j, i] = 1.0
    return maps


# ---------------------------------------------------------------- right-branching baseline


def test_right_branching_uas_equals_a_hand_count():
    # the dog barks loudly . : the->dog, dog->barks, barks=root, loudly->barks, .->barks
    first = sentence((2, 3, 0, 3, 3), ("det", "nsubj", "root", "advmod", "punct"),
                     ("DET", "NOUN", "VERB", "ADV", "PUNCT"))  # fmt: skip
    second = sentence((2, 0), ("nsubj", "root"))  # she left: she->left, left=root
    examples = [probe_example(s, word_maps_to([np.ones(len(s), int)])) for s in (first, second)]
    hits = right_branching_hits(examples)
    # first: the (2) and dog (3) right, barks (4 != root) and loudly (5) wrong, "." unscored;
    # second: she (2) right, and left, the last word, is the root
    assert hits.tolist() == [[2, 4], [2, 2]]
    assert uas(hits) == pytest.approx(4 / 6)


# ---------------------------------------------------------------- relation heads vs offsets


def chain_outcomes(num_sentences: int, seed: int, noisy: bool) -> ArcOutcomes:
    """Chains (each word's head is the previous word), so the -1 offset is always right.
    Head 0 attends to the previous word (for a random 70% of the words when `noisy`, to the
    last word otherwise); head 1 attends to the last word."""
    rng = np.random.default_rng(seed)
    outcomes = ArcOutcomes(["dep", "root"], [-1, 1], num_layers=1, num_heads=2)
    for _ in range(num_sentences):
        w = int(rng.integers(3, 8))
        tree = sentence(tuple(range(w)), ("root",) + ("dep",) * (w - 1))
        previous = np.maximum(np.arange(w), 1)  # word 1 has no previous word: itself is masked
        if noisy:
            previous = np.where(rng.random(w) < 0.7, previous, w)
        outcomes.add(tree, word_maps_to([previous, np.full(w, w)]))
    return outcomes


def test_a_head_equal_to_its_offset_differs_by_zero_with_zero_width():
    outcomes = chain_outcomes(20, seed=0, noisy=False)
    table = select_and_report(outcomes, outcomes, min_count=1)
    assert table.set_index("relation").loc["dep", ["head", "offset"]].tolist() == [0, -1]
    found = with_intervals(table, outcomes, resamples=200, seed=0).set_index("relation")
    row = found.loc["dep"]
    assert row["head_accuracy"] == row["offset_accuracy"] == 1.0
    assert row[["head_minus_offset", "head_minus_offset_ci_low", "head_minus_offset_ci_high"]
               ].tolist() == [0.0, 0.0, 0.0]  # fmt: skip


def test_relation_intervals_contain_the_estimate_and_resample_sentences():
    select = chain_outcomes(30, seed=1, noisy=True)
    report = chain_outcomes(40, seed=2, noisy=True)
    table = select_and_report(select, report, min_count=1)
    arcs, heads, offsets = hits_per_sentence(table, report)  # [S, T]
    assert arcs.shape == (40, len(table)) and arcs[:, -1].sum() == table["count"].iloc[-1]
    assert (heads <= arcs).all() and (offsets <= arcs).all()  # hits per sentence and row
    found = with_intervals(table, report, resamples=500, seed=0)
    for name in INTERVAL_COLUMNS:
        assert (found[f"{name}_ci_low"] <= found[name]).all()
        assert (found[name] <= found[f"{name}_ci_high"]).all()
    for name in ("head_accuracy", "head_minus_offset"):  # the offset is always right
        assert (found[f"{name}_ci_low"] < found[f"{name}_ci_high"]).all()
    np.testing.assert_allclose(found["head_accuracy"], table["head_accuracy"])
    np.testing.assert_allclose(
        found["head_minus_offset"], found["head_accuracy"] - found["offset_accuracy"]
    )
    metrics = relation_metrics(found)
    overall = found[found["relation"] == ALL].iloc[0]
    assert (
        metrics["all_relations_head_minus_offset_ci_high"] == overall["head_minus_offset_ci_high"]
    )
    assert metrics["dep_offset_accuracy_ci_low"] == found["offset_accuracy_ci_low"].iloc[0]


# ---------------------------------------------------------------- coreference head vs nearest


def test_coref_head_equal_to_nearest_differs_by_zero_with_zero_width():
    rng = np.random.default_rng(0)
    nearest = rng.random(50) < 0.6
    correct = np.stack([nearest, ~nearest], -1)[:, None]  # [E, 1 layer, 2 heads]
    scores = SplitScores(correct, nearest)
    same, baseline, difference = best_against_nearest(scores, 0, 0, resamples=300, seed=0)
    assert same.estimate == baseline.estimate == nearest.mean()
    assert (difference.estimate, difference.low, difference.high) == (0.0, 0.0, 0.0)
    _, _, opposite = best_against_nearest(scores, 0, 1, resamples=300, seed=0)
    assert opposite.estimate == pytest.approx(1 - 2 * nearest.mean())
    assert opposite.low < opposite.estimate < opposite.high


# ---------------------------------------------------------------- same-layer margin


def layer_margin(shared: bool, seed: int, num_layers: int = 3, num_heads: int = 4):
    """The margin on random maps, where the heads of a layer share their maps (up to
    noise) when `shared`, and every head draws its own otherwise."""
    rng = np.random.default_rng(seed)
    means, tokens = [], []
    for _ in range(40):
        n = int(rng.integers(5, 12))
        draws = num_layers if shared else num_layers * num_heads
        logits = rng.normal(0, 2, (draws, 1, n, n))
        if shared:
            logits = np.repeat(logits, num_heads, axis=1) + rng.normal(0, 0.3, (1, num_heads, n, n))
        maps = np.exp(logits).reshape(num_layers * num_heads, n, n)
        maps /= maps.sum(-1, keepdims=True)  # [K, n, n]
        means.append(layer_pair_means(js_divergence_sum(maps), num_layers, num_heads))
        tokens.append(n)
    return same_layer_margin(np.stack(means), np.array(tokens), resamples=500, seed=0)


def test_layer_pair_means_split_pairs_by_layer():
    distances = np.array([[0, 1, 5, 5], [1, 0, 7, 7], [5, 7, 0, 3], [5, 7, 3, 0]], float)
    np.testing.assert_allclose(layer_pair_means(distances, 2, 2), [2.0, 6.0])


def test_same_layer_margin_is_positive_for_layers_of_alike_heads_and_near_0_for_random():
    alike = layer_margin(shared=True, seed=0)
    random = layer_margin(shared=False, seed=0)
    assert alike.low > 0.1
    assert random.low < 0 < random.high
    assert abs(random.estimate) < alike.estimate / 20


def test_the_relative_gain_divides_alls_gain_by_the_specialised_relations_median(monkeypatch):
    from pipeline.clark import syntax

    # per row: 10 arcs in each of 4 sentences; gains (head - offset hits) / arcs:
    # all 0.1; det 0.5, amod 0.2, nsubj 0.3 (Table 1's: median 0.3, mean 0.33); acl 0.9 (not
    # Table 1's: left out)
    table = pd.DataFrame({"relation": [ALL, "det", "amod", "nsubj", "acl"]})
    gains = np.array([1, 5, 2, 3, 9])  # per sentence, of 10 arcs
    arcs = np.full((4, 5), 10)
    heads = np.tile(gains + 1, (4, 1))
    offsets = np.ones((4, 5), int)
    monkeypatch.setattr(syntax, "hits_per_sentence", lambda t, report: (arcs, heads, offsets))
    found = syntax.relative_gain(table, None, resamples=50, seed=0)
    assert found["all_relations_relative_gain"] == pytest.approx(0.1 / 0.3)
    assert found["relative_gain_relations"] == 3
    # no positive median gain: the relations are counted, no ratio (nor NaN) is written
    monkeypatch.setattr(
        syntax, "hits_per_sentence", lambda t, report: (arcs, offsets, np.tile(gains + 1, (4, 1)))
    )
    assert syntax.relative_gain(table, None, resamples=50, seed=0) == {"relative_gain_relations": 3}
    few = table[table["relation"].isin([ALL, "det", "acl"])]
    assert syntax.relative_gain(few, None, resamples=50, seed=0) == {}  # under three
