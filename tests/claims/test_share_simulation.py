"""The shares' design simulation at observed prevalence
(pipeline/claims/share_simulation.py): the truth is the estimate on the observed
run and round, a simulated run resamples whole examples, a simulated round has the round's
sizes and labels from P(type | call), the interval covers on a small run shaped like the
default one, bad input is named, and the committed table (and, slow, a full rerun on the
default run and its round) against the bar."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarks.share_estimate_crosscheck import P_TRUE
from benchmarks.share_estimate_crosscheck import SIZES as CROSSCHECK_SIZES
from pipeline.claims.coverage import LOWEST_COVERAGE
from pipeline.claims.share_simulation import (
    HEADER,
    PREDICTIONS,
    REPLICATES,
    RESAMPLES,
    ROUND,
    RULES,
    TABLE,
    main,
    markdown,
    observe,
    simulate,
    simulated_round,
    simulated_run,
    true_draws,
)
from pipeline.core.errors import PipelineError
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.design import CALL
from pipeline.kovaleva.patterns.share_estimate import read_round
from tests.support.paths import REPO

V, D, VD, B, H = CLASSES
DECIDED_FIRST_THREE = 0.80  # the first three types' share is decided in most replicates


def _predictions(cells: dict[tuple[str, str], list[list[str]]]) -> pd.DataFrame:
    """One row per map: cells map to their examples' calls, one call per head."""
    rows = [
        (task, variant, example, 1, head, call)
        for (task, variant), examples in cells.items()
        for example, calls in enumerate(examples)
        for head, call in enumerate(calls, start=1)
    ]
    return pd.DataFrame(rows, columns=["task", "variant", "example_id", "layer", "head", CALL])


def _labelled(pairs: list[tuple[str, str]]) -> pd.DataFrame:
    return pd.DataFrame({"call": [c for c, _ in pairs], "label": [t for _, t in pairs]})


# mrpc fine-tuned: W = (6/8 vertical, 2/8 heterogeneous); sst2 fine-tuned: vertical only
SMALL = _predictions(
    {
        ("mrpc", "finetuned"): [[V, V, V, H], [V, V, V, H]],
        ("mrpc", "pretrained"): [[H, H, H, H], [V, H, H, H]],
        ("sst2", "finetuned"): [[V, V, V, V], [V, V, V, V]],
    }
)
# P(. | vertical) = 3/4 vertical, 1/4 diagonal; P(. | heterogeneous) = 1/2 heterogeneous,
# 1/4 block, 1/4 vertical+diagonal
SMALL_ROUND = _labelled([(V, V)] * 3 + [(V, D), (H, H), (H, H), (H, B), (H, VD)])


def test_the_truth_is_the_estimate_on_the_observed_run_and_round():
    observed = observe(SMALL, SMALL_ROUND)
    assert observed.heads == 4
    assert observed.sizes.tolist() == [4, 0, 0, 0, 4]
    truth = true_draws(observed)
    assert [task for task, _ in truth.cells] == ["mrpc", "sst2"]  # fine-tuned cells only
    mrpc = dict(zip(CLASSES, truth.estimate[0], strict=True))
    assert mrpc[V] == pytest.approx(6 / 8 * 3 / 4)
    assert mrpc[D] == pytest.approx(6 / 8 * 1 / 4)
    assert mrpc[VD] == mrpc[B] == pytest.approx(2 / 8 * 1 / 4)
    assert mrpc[H] == pytest.approx(2 / 8 * 1 / 2)
    found = simulate(observed, replicates=3, resamples=20, progress=lambda r, desc: r)
    value = found.set_index(["target", "task"])["true_value"]
    assert value["first_three", "mrpc"] == pytest.approx(6 / 8 + 2 / 8 * 1 / 4)
    assert value["heterogeneous", "mrpc"] == pytest.approx(2 / 8 * 1 / 2)
    assert value["types_recur", "mrpc"] == pytest.approx(4 * 2 / 8 * 1 / 4)  # block's, x heads
    assert value["types_recur", "sst2"] == pytest.approx(0)  # no vertical+diagonal map


def test_a_simulated_run_draws_whole_examples_of_each_cell():
    observed = observe(SMALL, SMALL_ROUND)
    rng = np.random.default_rng(0)
    known = {tuple(sorted(calls)) for calls in [[V, V, V, H], [H, H, H, H], [V, H, H, H]]}
    for _ in range(20):
        run = simulated_run(observed, rng)
        assert run.groupby(["task", "variant"]).size().to_dict() == {
            ("mrpc", "finetuned"): 8, ("mrpc", "pretrained"): 8, ("sst2", "finetuned"): 8
        }  # fmt: skip
        for (task, _, _), maps in run.groupby(["task", "variant", "example_id"]):
            calls = tuple(sorted(maps[CALL].astype(str)))
            assert calls in known or (task == "sst2" and calls == (V,) * 4)


def test_a_simulated_round_has_the_rounds_sizes_and_labels_from_p():
    observed = observe(SMALL, SMALL_ROUND)
    rng = np.random.default_rng(1)
    labels = []
    for _ in range(200):
        drawn = simulated_round(simulated_run(observed, rng), observed, rng)
        assert drawn["call"].value_counts().to_dict() == {V: 4, H: 4}
        labels.append(drawn)
    every = pd.concat(labels)
    shares = pd.crosstab(every["call"], every["label"], normalize="index")
    assert shares.loc[V, V] == pytest.approx(3 / 4, abs=0.04)
    assert shares.loc[V, D] == pytest.approx(1 / 4, abs=0.04)
    assert shares.loc[H, H] == pytest.approx(1 / 2, abs=0.04)
    assert set(every.loc[every["call"] == V, "label"]) == {V, D}


def test_a_one_sentence_task_shows_no_block():
    """SST-2 (one sentence) and MRPC, each half vertical and half heterogeneous calls: among
    SST-2's heterogeneous calls P(. | heterogeneous) is taken without block (2/3
    heterogeneous, 1/3 vertical+diagonal), and its simulated labels are never block."""
    run = _predictions({(t, "finetuned"): [[V, V, H, H]] * 2 for t in ("mrpc", "sst2")})
    observed = observe(run, SMALL_ROUND)
    found = true_draws(observed)
    truth = dict(zip((t for t, _ in found.cells), found.estimate, strict=True))
    sst2, mrpc = (dict(zip(CLASSES, truth[t], strict=True)) for t in ("sst2", "mrpc"))
    assert sst2[B] == 0 and mrpc[B] == pytest.approx(1 / 2 * 1 / 4)
    assert sst2[H] == pytest.approx(1 / 2 * 2 / 3) and sst2[VD] == pytest.approx(1 / 2 * 1 / 3)
    rng = np.random.default_rng(2)
    drawn = pd.concat(
        [simulated_round(simulated_run(observed, rng), observed, rng) for _ in range(100)]
    )
    assert B in set(drawn.loc[drawn["task"] == "mrpc", "label"])
    assert B not in set(drawn.loc[drawn["task"] == "sst2", "label"])


# A small run like the default one: two tasks (one pair, one single-sentence) x two variants,
# 48 examples of 24 maps each, the examples' call shares spread around the cell's
# (Dirichlet, concentration 40); P(type | call), with every type in every stratum, and the
# round's sizes are the samplics cross-check's (benchmarks/share_estimate_crosscheck.py).
CALL_SHARES = np.array([0.69, 0.041, 0.13, 0.0008, 0.1382])  # CLASSES order
SIZES = tuple(CROSSCHECK_SIZES.values())  # the round's n_h


def _observed_like_the_default_run(rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    cells = [(t, v) for t in ("mrpc", "sst2") for v in ("finetuned", "pretrained")]
    runs = []
    for task, variant in cells:
        shares = rng.dirichlet(40 * CALL_SHARES, size=48)
        calls = [list(rng.choice(CLASSES, size=24, p=s)) for s in shares]
        runs.append(_predictions({(task, variant): calls}))
    labels = [
        (call, t)
        for call, n, p in zip(CLASSES, SIZES, P_TRUE, strict=True)
        for t in rng.choice(CLASSES, size=n, p=p)
    ]
    return pd.concat(runs, ignore_index=True), _labelled(labels)


def test_the_interval_covers_on_a_small_run_like_the_default_one():
    """100 replicates, 200 resamples an interval: the first three types' and the
    heterogeneous share's coverage, whose Monte Carlo error at 100 replicates is about
    0.02, at least 0.88; the first three types are decided every time (far above 0.25)."""
    observed = observe(*_observed_like_the_default_run(np.random.default_rng(5)))
    found = simulate(observed, replicates=100, resamples=200, progress=lambda r, desc: r)
    shares = found[found["target"] != "types_recur"]
    assert (shares["coverage"] >= 0.88).all(), shares
    assert (found.loc[found["target"] == "first_three", "decided"] == 1).all()
    assert (found.loc[found["target"] == "first_three", "falsely_contradicted"] == 0).all()
    assert found.loc[found["target"] == "first_three", "falsely_supported"].isna().all()


def test_bad_input_is_named_with_its_fix():
    with pytest.raises(PipelineError, match=f"no column '{CALL}'.*patterns_apply"):
        observe(SMALL.drop(columns=CALL), SMALL_ROUND)
    with pytest.raises(PipelineError, match="no labelled map called heterogeneous"):
        observe(SMALL, SMALL_ROUND[SMALL_ROUND["call"] == V])
    only_block = _labelled([(V, V), (H, B)])
    with pytest.raises(PipelineError, match="called heterogeneous is of a type sst2's inputs"):
        observe(SMALL.assign(**{CALL: SMALL[CALL].replace(V, H)}), only_block)


def test_a_count_below_one_is_refused(tmp_path, capsys):
    missing, out = tmp_path / "none.parquet", tmp_path / "table.md"
    with pytest.raises(SystemExit):
        main(["--replicates", "0", "--predictions", str(missing), "--out", str(out)])
    assert "argument --replicates: 0 is not a count: give 1 or more" in capsys.readouterr().err


def test_the_table_shows_each_row_with_its_threshold():
    found = pd.DataFrame(
        {"target": ["first_three", "heterogeneous"], "task": "mrpc",
         "true_value": [0.8, 0.2], "coverage": [0.95, 0.94], "decided": [1.0, 0.9],
         "falsely_contradicted": [0.0, 0.01], "falsely_supported": [np.nan, np.nan]}
    )  # fmt: skip
    lines = markdown(found, 10, 20).splitlines()
    assert lines[0].startswith("10 simulated runs and rounds; 20 resamples an interval")
    assert lines[2] == HEADER
    assert lines[4] == "| first_three | mrpc | 0.800 | > 0.25 | 0.950 | 1.000 | 0.000 | - |"
    assert lines[5] == "| heterogeneous | mrpc | 0.200 | < 0.5 | 0.940 | 0.900 | 0.010 | - |"


def _committed_rows() -> pd.DataFrame:
    lines = (REPO / TABLE).read_text().splitlines()
    assert lines[2] == HEADER, f"{TABLE} is not what the simulation writes"
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines[4:]]
    return pd.DataFrame(cells, columns=[c.strip() for c in HEADER.strip("|").split("|")])


def test_the_committed_table_has_every_row_at_the_default_settings():
    lines = (REPO / TABLE).read_text().splitlines()
    assert lines[0].startswith(f"{REPLICATES:,} simulated runs and rounds; {RESAMPLES:,} ")
    rows = _committed_rows()
    tasks = ["mrpc", "rte", "sst2", "stsb"]
    assert sorted(zip(rows["target"], rows["task"], strict=True)) == sorted(
        (target, task) for target in RULES for task in tasks
    )
    _meets_the_bar(rows.astype({"coverage": float, "decided": float}))


def _meets_the_bar(found: pd.DataFrame) -> None:
    assert (found["coverage"] >= LOWEST_COVERAGE).all(), found
    first_three = found[found["target"] == "first_three"]
    assert (first_three["decided"] >= DECIDED_FIRST_THREE).all(), first_three


@pytest.mark.slow
def test_at_observed_prevalence_every_row_meets_the_bar():
    """The default run's predictions (a DVC output) and its share round, at the default
    settings: coverage at least LOWEST_COVERAGE in every row, the first three types decided
    in at least 80% of the replicates."""
    if not (REPO / PREDICTIONS).exists():
        pytest.skip(f"{PREDICTIONS} not found: run patterns_apply (dvc repro patterns_apply)")
    observed = observe(pd.read_parquet(REPO / PREDICTIONS), read_round(REPO / ROUND))
    _meets_the_bar(simulate(observed, REPLICATES, RESAMPLES))
