"""Hard-concrete gates against the distribution's analytic formulas, and on a tiny classifier."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import integrate

from pipeline.analyses.gates.settings import GatesConfig
from pipeline.attention.engine import HeadControl, attach
from pipeline.attention.layerwise import Layerwise
from pipeline.core.errors import PipelineError
from pipeline.core.schema import TaskConfig
from pipeline.data.encoding import collate
from pipeline.voita.gates import both_curves, check_same_start, michel_from_tables
from pipeline.voita.hard_concrete import (
    BETA,
    GAMMA,
    ZETA,
    HardConcrete,
    fit_gates,
    gate_sweep,
    jaccard,
    kept_overlap,
    random_jaccard,
    top_heads,
)
from tests.support.builders import tiny_bert

SAMPLES = 200_000


def cdf(t: float, log_alpha: float) -> float:
    """P(z <= t) for 0 <= t < 1: P(s <= x) = sigmoid(beta logit(x) - log_alpha), with
    x = (t - gamma) / (zeta - gamma) the stretched value's pre-image."""
    x = (t - GAMMA) / (ZETA - GAMMA)
    return 1 / (1 + math.exp(-(BETA * math.log(x / (1 - x)) - log_alpha)))


@pytest.mark.parametrize("log_alpha", [-2.0, 0.0, 1.5])
def test_samples_match_the_mean_and_the_probability_of_zero(log_alpha):
    gates = HardConcrete((SAMPLES, 1), log_alpha)
    with torch.no_grad():
        z = gates.sample(torch.Generator().manual_seed(0)).double()
    mean = integrate.quad(lambda t: 1 - cdf(t, log_alpha), 0, 1)[0]  # E[z] = int P(z > t) dt
    p_zero = cdf(0.0, log_alpha)
    p_one = 1 - cdf(1 - 1e-12, log_alpha)
    assert float(z.mean()) == pytest.approx(mean, abs=4e-3)
    assert float((z == 0).double().mean()) == pytest.approx(p_zero, abs=4e-3)
    assert float((z == 1).double().mean()) == pytest.approx(p_one, abs=4e-3)
    assert float(gates.prob_open().detach()[0, 0]) == pytest.approx(1 - p_zero, abs=1e-6)
    assert float(gates.l0_penalty().detach()) == pytest.approx(SAMPLES * (1 - p_zero), rel=1e-5)


def test_test_time_gate_and_keep_rule():
    gates = HardConcrete((1, 3), 0.0)
    with torch.no_grad():
        gates.log_alpha.copy_(torch.tensor([[-1.0, 0.1, 3.0]]))
    expected = (torch.sigmoid(gates.log_alpha) * (ZETA - GAMMA) + GAMMA).clamp(0, 1)
    torch.testing.assert_close(gates.deterministic(), expected.detach())
    assert gates.kept().tolist() == [[False, True, True]]


@pytest.fixture(scope="module")
def layerwise():
    return Layerwise.of(attach(tiny_bert()))


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    rows = [{"input_ids": rng.integers(5, 40, size=n).tolist()} for n in rng.integers(4, 12, 24)]
    return rows, rng.integers(0, 2, size=len(rows))


TASK = TaskConfig(
    name="toy", hub_config="toy", text_columns=["sentence"], label_names=["a", "b"],
    is_regression=False, metrics=["accuracy"], main_metric="accuracy", eval_split="validation",
)  # fmt: skip


def settings(lambdas, steps=30) -> GatesConfig:
    return GatesConfig(
        train_examples=None, batch_size=8, steps=steps, learning_rate=0.1,
        init_log_alpha=2.0, lambdas=lambdas,
    )  # fmt: skip


def test_gates_of_all_ones_leave_the_logits_unchanged(layerwise, data):
    batch = collate(data[0][:6], 0)
    with torch.no_grad():
        plain = layerwise.model(**batch).logits
        hidden, mask = layerwise.embed(batch)
        ones = torch.ones(2, 3)
        gated = layerwise.logits(hidden, mask, control=HeadControl(gate=ones))
        gated_model = layerwise.model(**batch, head_control=HeadControl(gate=ones)).logits
    torch.testing.assert_close(gated, plain, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(gated_model, plain, atol=1e-5, rtol=1e-5)


def test_lambda_zero_keeps_every_head_and_a_strong_penalty_prunes(layerwise, data):
    rows, labels = data
    weights = [p.detach().clone() for p in layerwise.model.parameters()]
    curve, kept = gate_sweep(
        layerwise, (rows, labels), (rows, labels), TASK, settings([0.0, 5.0]),
        pad_id=0, seed=0, bootstrap_resamples=50,
    )  # fmt: skip
    assert curve["heads_kept"].tolist() == [6, 0]
    assert kept[0.0].all() and not kept[5.0].any()
    assert list(curve.columns[:3]) == ["l0_lambda", "heads_kept", "accuracy"]
    for before, after in zip(weights, layerwise.model.parameters(), strict=True):
        assert torch.equal(before, after)  # the model stays frozen
        assert after.requires_grad  # and is given back as it was


def test_fit_is_seeded(layerwise, data):
    rows, labels = data
    fits = [
        fit_gates(layerwise, rows, labels, TASK, l0_lambda=0.05, settings=settings([], steps=5),
                  pad_id=0, seed=3).log_alpha.detach()
        for _ in range(2)
    ]  # fmt: skip
    torch.testing.assert_close(fits[0], fits[1])


def test_overlap_with_the_most_important_heads():
    importance = np.array([[0.9, 0.1, 0.5], [0.2, 0.8, 0.3]])
    keep = np.array([[True, False, False], [False, True, True]])
    assert top_heads(importance, 2).tolist() == [[True, False, False], [False, True, False]]
    table = kept_overlap({0.1: keep}, importance)
    assert table["jaccard"].iloc[0] == pytest.approx(0.5)  # 2 shared heads of 4 in the union
    assert jaccard(keep, keep) == 1.0


def test_random_jaccard_matches_simulation():
    rng = np.random.default_rng(0)
    total, count = 12, 4
    draws = [
        jaccard(*(np.isin(np.arange(total), rng.choice(total, count, replace=False))
                  for _ in range(2)))
        for _ in range(20_000)
    ]  # fmt: skip
    assert random_jaccard(total, count) == pytest.approx(np.mean(draws), abs=5e-3)


def test_both_curves_put_pruning_on_the_heads_kept_axis():
    gates = pd.DataFrame(
        {"l0_lambda": [0.0], "heads_kept": [6], "accuracy": [0.7], "ci_low": [0.6],
         "ci_high": [0.8]}
    )  # fmt: skip
    pruning = pd.DataFrame({"heads_pruned": [0, 3, 6], "fraction_pruned": [0, 0.5, 1],
                            "accuracy": [0.7, 0.6, 0.5], "delta": [0, -0.1, -0.2]})  # fmt: skip
    table = both_curves(gates, pruning, "accuracy", total=6)
    gradient = table[table.method == "gradient"]
    assert gradient["heads_kept"].tolist() == [6, 3, 0]
    assert gradient["metric"].tolist() == [0.7, 0.6, 0.5]
    assert gradient["ci_low"].isna().all()  # no interval in that pruning table


def test_michel_tables_from_one_based_importance():
    importance = pd.DataFrame(
        {"layer": [1, 1, 2, 2], "head": [1, 2, 1, 2], "importance": [0.1, 0.2, 0.3, 0.4]}
    )
    michel = michel_from_tables(pd.DataFrame({"heads_pruned": [0]}), importance)
    np.testing.assert_allclose(michel.importance, [[0.1, 0.2], [0.3, 0.4]])


def test_a_stale_pruning_table_is_refused():
    pruning = pd.DataFrame({"heads_pruned": [0, 3], "accuracy": [0.75, 0.6]})
    check_same_start(pruning, {"accuracy": 0.75}, TASK)  # same rows, same model: passes
    with pytest.raises(PipelineError, match="re-run the ablate stage"):
        check_same_start(pruning, {"accuracy": 0.70}, TASK)
