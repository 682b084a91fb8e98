"""Fine-tuning seeds: `seeds` must hold the primary `seed`; the seed changes the fine-tuned
weights (and the same seed repeats them); predictions.csv is what the metrics score; the
cross-seed statistics equal hand computations on hand-made tables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf
from safetensors.numpy import load_file

from pipeline.ablation.sweep import Uncertainty
from pipeline.core.config import CONF_DIR
from pipeline.core.errors import PipelineError
from pipeline.core.run_config import check_seeds
from pipeline.core.schema import load_task
from pipeline.core.stage import StageRun
from pipeline.extensions.cross_seed import (
    ALPHA,
    SeedRuns,
    compare_seeds,
    pairwise_spearman,
    significant_every_seed,
    summary_text,
)
from stages import finetune as finetune_stage
from tests.support.builders import composed, drawn
from tests.support.paths import REPO


def test_seeds_must_contain_the_primary_seed() -> None:
    check_seeds(OmegaConf.create({"seed": 42, "seeds": [41, 42]}), 41)
    with pytest.raises(
        PipelineError, match=r"`seeds` \[43\] does not contain the primary `seed` 42"
    ):
        check_seeds(OmegaConf.create({"seed": 42, "seeds": [43]}))
    with pytest.raises(PipelineError, match=r"--seed 7 is not in `seeds` \[42\]"):
        check_seeds(OmegaConf.create({"seed": 42, "seeds": [42]}), 7)


# check_seeds is tested in-process above; here the wiring of a DVC stage's run
@pytest.mark.slow  # a stage process that loads torch: about 10 s
def test_a_dvc_stage_without_the_primary_seed_in_seeds_fails_in_one_line(tmp_path) -> None:
    cfg = composed()  # composing refuses it: params.yaml edited by hand
    cfg.seeds = [43]
    (tmp_path / "params.yaml").write_text(OmegaConf.to_yaml(cfg))
    result = subprocess.run(
        [sys.executable, "-m", "stages.finetune", "--dvc", "sst2", "--seed", "43"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "`seeds` [43] does not contain the primary `seed` 42" in lines[0]
    assert "add 42 to `seeds`" in lines[0]
    assert not (tmp_path / "outputs").exists()


def _tiny_sst2(root: Path) -> None:
    rng = np.random.default_rng(1)
    words = ["good", "bad", "film", "plot", "actors", "boring", "fun", "long"]
    folder = root / "data" / "glue" / "sst2"
    folder.mkdir(parents=True)
    for split, size in (("train", 24), ("validation", 12)):
        sentences = [" ".join(rng.choice(words, size=6)) for _ in range(size)]
        frame = pd.DataFrame({"idx": np.arange(size) * 3 + 5, "sentence": sentences})
        frame["label"] = rng.integers(0, 2, size=size)
        frame.to_parquet(folder / f"{split}.parquet")


def _finetune(root: Path, seed: int) -> Path:
    """The finetune stage as `dvc repro` runs it for (sst2, seed); returns the outputs folder."""
    cfg = composed("model=tiny_random", "finetune.epochs=1", "seeds=[42,7]")
    cfg.paths.data = str(root / "data")
    cfg.task = OmegaConf.load(CONF_DIR / "task" / "sst2.yaml")
    cfg.device = "cpu"
    outputs = root / "outputs"
    finetune_stage.run(StageRun(cfg, out_root=outputs, under_dvc=True, seed_item=seed))
    return outputs


@pytest.fixture(scope="module")
def finetuned(tmp_path_factory) -> dict[str, Path]:
    """Outputs of seeds 42 and 7 in one folder, and of seed 42 again in another."""
    first, again = tmp_path_factory.mktemp("seeds"), tmp_path_factory.mktemp("again")
    _tiny_sst2(first)
    _tiny_sst2(again)
    _finetune(first, 42)
    _finetune(first, 7)
    return {"both": _finetune(first, 42), "again": _finetune(again, 42)}


def _weights(outputs: Path, seed: int) -> dict[str, np.ndarray]:
    return load_file(outputs / "models" / "sst2" / f"seed{seed}" / "model.safetensors")


def test_two_seeds_fine_tune_different_weights_and_one_seed_the_same(finetuned) -> None:
    first, second = _weights(finetuned["both"], 42), _weights(finetuned["both"], 7)
    again = _weights(finetuned["again"], 42)
    assert first.keys() == second.keys() == again.keys()
    assert any(not np.array_equal(first[k], second[k]) for k in first)
    assert all(np.array_equal(first[k], again[k]) for k in first)
    for seed in (42, 7):
        assert (finetuned["both"] / "metrics/finetune/sst2" / f"seed{seed}.json").exists()
        assert (finetuned["both"] / "figures/finetune/sst2" / f"seed{seed}" / "loss.png").exists()
    checkpoints = finetuned["both"] / "checkpoints/finetune/sst2"
    assert not list(checkpoints.glob("seed*"))  # each seed's checkpoints go once it is written


def test_predictions_hold_one_row_per_dev_row_and_give_the_metrics(finetuned) -> None:
    for seed in (42, 7):
        folder = finetuned["both"] / "plots/finetune/sst2" / f"seed{seed}"
        predictions = pd.read_csv(folder / "predictions.csv")
        dev = pd.read_parquet(finetuned["both"].parent / "data/glue/sst2/validation.parquet")
        assert list(predictions.columns) == [
            "idx", "label", "pretrained", "random_init", "finetuned",
        ]  # fmt: skip
        assert predictions["idx"].tolist() == dev["idx"].tolist()
        assert predictions["label"].tolist() == dev["label"].tolist()
        metrics = json.loads(
            (finetuned["both"] / f"metrics/finetune/sst2/seed{seed}.json").read_text()
        )
        assert metrics["eval_rows"] == len(predictions) == 12
        for variant in ("pretrained", "random_init", "finetuned"):
            accuracy = (predictions[variant] == predictions["label"]).mean()
            assert accuracy == pytest.approx(metrics[f"{variant}.accuracy"], abs=1e-12)


# Hand-made ablate tables: two layers x two heads, three seeds.
HEADS = [(1, 1), (1, 2), (2, 1), (2, 2)]
DELTAS = {1: [0.10, 0.00, -0.05, 0.20], 2: [0.30, 0.01, -0.10, 0.25], 3: [0.0, 0.02, 0.3, -0.1]}
Q = {1: [0.01, 0.5, 0.04, 0.001], 2: [0.02, 0.9, 0.2, 0.03], 3: [0.04, 0.01, 0.5, 0.01]}
IMPORTANCE = {1: [1.0, 2.0, 3.0, 4.0], 2: [1.0, 3.0, 2.0, 4.0], 3: [4.0, 3.0, 2.0, 1.0]}


def _heads(seed: int) -> pd.DataFrame:
    layer, head = zip(*HEADS, strict=True)
    table = pd.DataFrame({"layer": layer, "head": head, "delta": DELTAS[seed], "q_value": Q[seed]})
    return table.iloc[::-1].reset_index(drop=True)  # row order must not matter


def _importance(seed: int) -> pd.DataFrame:
    layer, head = zip(*HEADS, strict=True)
    return pd.DataFrame({"layer": layer, "head": head, "importance": IMPORTANCE[seed]})


def _runs(seeds: list[int]) -> SeedRuns:
    accuracy = {1: 0.80, 2: 0.70, 3: 0.90}
    return SeedRuns(
        load_task("sst2"),
        {s: {"finetuned.accuracy": accuracy[s]} for s in seeds},
        {s: _heads(s) for s in seeds},
        {s: _importance(s) for s in seeds},
    )


def test_the_cross_seed_alpha_is_the_ablate_stage_alpha() -> None:
    assert Uncertainty.alpha == ALPHA


def test_pairwise_spearman_equals_the_hand_computation() -> None:
    pairs = pairwise_spearman({s: _heads(s) for s in (1, 2, 3)}, "delta")
    # ranks by (L1-H1, L1-H2, L2-H1, L2-H2): seed 1 (3, 2, 1, 4), seed 2 (4, 2, 1, 3),
    # seed 3 (2, 3, 4, 1); rho = 1 - 6 sum d^2 / (n (n^2 - 1)), n = 4
    expected = {(1, 2): 1 - 6 * 2 / 60, (1, 3): 1 - 6 * 20 / 60, (2, 3): 1 - 6 * 18 / 60}
    got = {(a, b): rho for a, b, rho in pairs[["seed_a", "seed_b", "spearman"]].itertuples(False)}
    assert got == pytest.approx(expected)
    assert pairs["heads"].tolist() == [4, 4, 4]


def test_a_constant_seed_has_no_rank_correlation() -> None:
    flat = _heads(1).assign(delta=0.0)
    pairs = pairwise_spearman({1: flat, 2: _heads(2)}, "delta")
    assert pairs["spearman"].isna().all()
    runs = _runs([1, 2])
    runs.heads[1]["delta"] = 0.0
    assert "sst2.ablation_spearman" not in compare_seeds(runs).metrics


def test_heads_significant_in_every_seed_are_the_hand_picked_ones() -> None:
    # q < 0.05: seed 1 {L1-H1, L2-H1, L2-H2}, seed 2 {L1-H1, L2-H2}, seed 3 {L1-H1, L1-H2, L2-H2}
    both = significant_every_seed({s: _heads(s) for s in (1, 2)})
    assert list(zip(both["layer"], both["head"], strict=True)) == [(1, 1), (2, 2)]
    assert both["delta_seed1"].tolist() == [0.10, 0.20]
    assert both["delta_seed2"].tolist() == [0.30, 0.25]
    every = significant_every_seed({s: _heads(s) for s in (1, 2, 3)})
    assert list(zip(every["layer"], every["head"], strict=True)) == [(1, 1), (2, 2)]


def test_cross_seed_metrics_of_three_seeds() -> None:
    compared = compare_seeds(_runs([1, 2, 3]))
    m = compared.metrics
    assert m["sst2.seeds"] == 3
    assert m["sst2.metric_mean"] == pytest.approx(0.80)
    assert m["sst2.metric_sd"] == pytest.approx(0.10)  # sqrt((0.01 + 0.01) / 2)
    assert m["sst2.ablation_spearman"] == pytest.approx((0.8 - 0.8 - 1.0) / 3)
    # importance ranks: seed 1 (1, 2, 3, 4), seed 2 (1, 3, 2, 4), seed 3 (4, 3, 2, 1)
    assert m["sst2.importance_spearman"] == pytest.approx((0.8 - 1.0 - 0.8) / 3)
    assert m["sst2.heads_significant_every_seed"] == 2
    assert set(compared.tables) == {
        "metric",
        "ablation_spearman",
        "importance_spearman",
        "significant",
    }
    assert all(t["task"].eq("sst2").all() for t in compared.tables.values())


def test_one_seed_leaves_the_spread_and_correlations_out_and_says_so() -> None:
    compared = compare_seeds(_runs([1]))
    assert compared.metrics == {
        "sst2.seeds": 1,
        "sst2.metric_mean": pytest.approx(0.80),
        "sst2.heads_significant_every_seed": 3,
    }
    assert "one seed: no spread, no correlation" in summary_text([compared])


def test_a_missing_seed_names_the_file_and_the_fix(tmp_path) -> None:
    from pipeline.extensions.cross_seed import read_seed_runs

    task = load_task("sst2")
    with pytest.raises(PipelineError, match=r"finetune/sst2/seed43\.json is missing; run `dvc"):
        read_seed_runs(tmp_path, task, [43])


def test_the_cross_seed_stage_writes_tables_figures_and_metrics(tmp_path) -> None:
    from stages import cross_seed

    runs = _runs([1, 2, 3])
    for seed in (1, 2, 3):
        path = tmp_path / "metrics/finetune/sst2" / f"seed{seed}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(runs.metrics[seed]))
        tables = tmp_path / "plots/ablate/sst2" / f"seed{seed}"
        tables.mkdir(parents=True)
        _heads(seed).to_csv(tables / "heads.csv", index=False)
        _importance(seed).to_csv(tables / "importance.csv", index=False)
    cfg = OmegaConf.create(
        {"tasks": ["sst2"], "seed": 1, "seeds": [1, 2, 3], "model": {"name": "tiny"}}
        | {"paths": {"outputs": str(tmp_path)}}
    )
    cross_seed.run(StageRun(cfg, out_root=tmp_path, under_dvc=True))
    written = json.loads((tmp_path / "metrics/cross_seed.json").read_text())
    assert written == pytest.approx(compare_seeds(runs).metrics)
    plots = tmp_path / "plots/cross_seed"
    assert pd.read_csv(plots / "metric.csv")["seed"].tolist() == [1, 2, 3]
    assert len(pd.read_csv(plots / "ablation_spearman.csv")) == 3  # seed pairs
    assert pd.read_csv(plots / "significant.csv")[["layer", "head"]].values.tolist() == [
        [1, 1], [2, 2],
    ]  # fmt: skip
    assert "sst2: 3 seed(s), accuracy 0.8000 +- 0.1000" in (plots / "summary.txt").read_text()
    figures = tmp_path / "figures/cross_seed"
    assert "each of the 3 fine-tuning seeds" in drawn(figures / "metric_by_seed.png")
    assert "under the first fine-tuning seed against the second" in drawn(
        figures / "head_effects.png"
    )
