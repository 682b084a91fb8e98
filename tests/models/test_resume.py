"""Resumable fine-tuning: a run killed after step k and started again ends bit-identical to an
uninterrupted one (CPU); a changed config never resumes; the stage removes its checkpoints."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest
import torch
from omegaconf import OmegaConf

from pipeline.core.config import CONF_DIR
from pipeline.core.stage import StageRun
from pipeline.models.checkpoints import Checkpoints, fingerprint
from stages import finetune as finetune_stage
from tests.support.builders import composed
from tests.support.training_runs import (
    Killed,
    fresh_model,
    kill_after,
    random_rows,
    run,
    same_weights,
)


@pytest.fixture(scope="module")
def data():
    return random_rows()


@pytest.mark.parametrize("kill_at", [3, 11])  # mid first epoch (no checkpoint yet: 1), second
def test_a_killed_run_resumes_to_the_uninterrupted_result(
    tiny_model_cfg, tokenizer, data, tmp_path, monkeypatch, kill_at
) -> None:
    uninterrupted = fresh_model(tiny_model_cfg, tokenizer)
    expected_curve = run(uninterrupted, data)

    checkpoints = Checkpoints(tmp_path / "ckpt", every=5, fingerprint="run")
    with monkeypatch.context() as patch:
        kill_after(patch, kill_at)
        with pytest.raises(Killed):
            run(fresh_model(tiny_model_cfg, tokenizer), data, checkpoints)
    assert checkpoints.path.exists() == (kill_at >= 5)
    if kill_at >= 5:
        assert torch.load(checkpoints.path, weights_only=False)["step"] == 10

    resumed = fresh_model(tiny_model_cfg, tokenizer)
    curve = run(resumed, data, checkpoints)
    assert same_weights(resumed, uninterrupted)
    assert curve == expected_curve  # the loss curve too: window losses carried over


def test_a_finished_run_restarts_from_its_last_state(
    tiny_model_cfg, tokenizer, data, tmp_path
) -> None:
    checkpoints = Checkpoints(tmp_path / "ckpt", every=100, fingerprint="run")
    first = fresh_model(tiny_model_cfg, tokenizer)
    curve = run(first, data, checkpoints)
    assert torch.load(checkpoints.path, weights_only=False)["step"] == 16  # the last step
    again = fresh_model(tiny_model_cfg, tokenizer)
    assert run(again, data, checkpoints) == curve
    assert same_weights(again, first)


def test_a_changed_config_starts_fresh_with_one_log_line(
    tiny_model_cfg, tokenizer, data, tmp_path, caplog
) -> None:
    rows, labels = data
    old = fingerprint({"learning_rate": 1e-3}, rows, labels)
    new = fingerprint({"learning_rate": 2e-3}, rows, labels)
    assert old != new
    assert fingerprint({"learning_rate": 1e-3}, rows, labels[::-1].copy()) != old  # data
    saved = Checkpoints(tmp_path / "ckpt", every=5, fingerprint=old)
    run(fresh_model(tiny_model_cfg, tokenizer), data, saved)  # leaves its step-16 state

    with caplog.at_level(logging.INFO, logger="pipeline.models.checkpoints"):
        changed = fresh_model(tiny_model_cfg, tokenizer)
        run(changed, data, Checkpoints(tmp_path / "ckpt", every=5, fingerprint=new))
    assert [r.message for r in caplog.records if "starting fresh" in r.message]
    assert not [r.message for r in caplog.records if "resuming" in r.message]
    plain = fresh_model(tiny_model_cfg, tokenizer)
    run(plain, data)
    assert same_weights(changed, plain)  # trained from step 0, not from the old state


def test_the_finetune_stage_removes_its_checkpoints(tmp_path, tokenizer) -> None:
    rng = np.random.default_rng(1)
    words = ["good", "bad", "film", "plot", "actors", "boring", "fun", "long"]
    for split, size in (("train", 24), ("validation", 8)):
        folder = tmp_path / "data" / "glue" / "sst2"
        folder.mkdir(parents=True, exist_ok=True)
        sentences = [" ".join(rng.choice(words, size=6)) for _ in range(size)]
        frame = pd.DataFrame({"idx": range(size), "sentence": sentences})
        frame["label"] = rng.integers(0, 2, size=size)
        frame.to_parquet(folder / f"{split}.parquet")
    cfg = composed(
        "model=tiny_random",
        "finetune.epochs=1",
        "finetune.checkpoint_every=2",
        "finetune.baselines.random_init=false",
    )
    cfg.paths.outputs = str(tmp_path / "outputs")
    cfg.paths.data = str(tmp_path / "data")
    cfg.task = OmegaConf.load(CONF_DIR / "task" / "sst2.yaml")
    cfg.device = "cpu"
    saved = []
    real_save = Checkpoints.save

    def save(self, state):
        real_save(self, state)
        saved.append(self.path)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Checkpoints, "save", save)
        finetune_stage.run(StageRun(cfg=cfg, out_root=tmp_path / "outputs", under_dvc=True))
    assert saved and saved[0].is_relative_to(tmp_path / "outputs" / "checkpoints")
    assert not (tmp_path / "outputs" / "checkpoints" / "finetune" / "sst2" / "seed42").exists()
    assert (tmp_path / "outputs" / "metrics" / "finetune" / "sst2" / "seed42.json").exists()
