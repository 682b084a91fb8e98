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
from pipeline.data.batching import length_grouped_batches
from pipeline.models import training
from pipeline.models.checkpoints import Checkpoints, fingerprint
from stages import finetune as finetune_stage
from tests.support.builders import composed
from tests.support.training_runs import (
    SEED,
    SETTINGS,
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


def short_batch_at(data, epoch: int) -> int:
    """Where the one short batch of `epoch` falls among its batches (not last: the tests below
    need batches after it)."""
    lengths = [len(row["input_ids"]) for row in data[0]]
    sizes = [len(b) for b in length_grouped_batches(lengths, SETTINGS.batch_size, SEED + epoch)]
    (short,) = [k for k, size in enumerate(sizes) if size < SETTINGS.batch_size]
    assert short < len(sizes) - 1
    return short


def test_train_iterates_exactly_the_grouped_batches(tiny_model_cfg, tokenizer, data, monkeypatch):
    real, seen = training.padded_batches, []

    def recorded(*args, **kwargs):
        for chosen, batch in real(*args, **kwargs):
            seen.append(list(chosen))
            assert batch["input_ids"].shape[0] == len(chosen)
            yield chosen, batch

    monkeypatch.setattr(training, "padded_batches", recorded)
    run(fresh_model(tiny_model_cfg, tokenizer), data)
    lengths = [len(row["input_ids"]) for row in data[0]]
    expected = [
        b
        for epoch in range(SETTINGS.epochs)
        for b in length_grouped_batches(lengths, SETTINGS.batch_size, SEED + epoch)
    ]
    assert seen == expected
    assert short_batch_at(data, 0) < 7  # the short batch sits inside the epoch


@pytest.mark.parametrize("epoch", [0, 1])
def test_a_run_resumed_right_after_the_short_batch_ends_with_the_uninterrupted_bytes(
    tiny_model_cfg, tokenizer, data, tmp_path, monkeypatch, epoch
) -> None:
    """Resume counts batches: a checkpoint taken after the short batch (2 rows, not 4)
    resumes at the next batch, not 2 rows further on."""
    uninterrupted = fresh_model(tiny_model_cfg, tokenizer)
    expected_curve = run(uninterrupted, data)

    steps_per_epoch = -(-len(data[0]) // SETTINGS.batch_size)
    after_short = epoch * steps_per_epoch + short_batch_at(data, epoch) + 1
    checkpoints = Checkpoints(tmp_path / "ckpt", every=after_short, fingerprint="run")
    with monkeypatch.context() as patch:
        kill_after(patch, after_short)
        with pytest.raises(Killed):
            run(fresh_model(tiny_model_cfg, tokenizer), data, checkpoints)
    assert torch.load(checkpoints.path, weights_only=False)["step"] == after_short

    resumed = fresh_model(tiny_model_cfg, tokenizer)
    assert run(resumed, data, checkpoints) == expected_curve
    saved = {}
    for name, model in (("resumed", resumed), ("uninterrupted", uninterrupted)):
        model.save_pretrained(tmp_path / name)
        saved[name] = (tmp_path / name / "model.safetensors").read_bytes()
    assert saved["resumed"] == saved["uninterrupted"]


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
