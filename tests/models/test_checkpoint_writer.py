"""Checkpoints written from a thread: the loop goes on while the file is written, the file
holds the state as it was when saved, and `wait` returns once it is whole on disk."""

from __future__ import annotations

import threading

import pytest
import torch

from pipeline.models import checkpoints as checkpoints_module
from pipeline.models.checkpoints import Checkpoints


def test_a_background_save_returns_before_the_write_and_keeps_the_saved_state(
    tmp_path, monkeypatch
):
    release, real_save = threading.Event(), torch.save

    def slow_save(obj, path):  # a disk that answers only when the test says so
        assert release.wait(timeout=30)
        real_save(obj, path)

    monkeypatch.setattr(checkpoints_module.torch, "save", slow_save)
    saved = Checkpoints(tmp_path / "ckpt", every=1, fingerprint="run")
    weights = torch.zeros(3)
    saved.save_in_background({"step": 1, "model": {"w": weights}, "curve": [(1, 0.5)]})
    assert not saved.path.exists()  # returned while the write waits
    weights += 1  # training goes on changing its tensors in place
    release.set()
    saved.wait()
    state = torch.load(saved.path, weights_only=False)
    assert state["step"] == 1 and torch.equal(state["model"]["w"], torch.zeros(3))
    assert state["curve"] == [(1, 0.5)] and state["fingerprint"] == "run"
    assert not saved.writing


def test_a_failed_background_save_is_raised_by_wait(tmp_path, monkeypatch):
    def full_disk(obj, path):
        raise OSError("No space left on device")

    monkeypatch.setattr(checkpoints_module.torch, "save", full_disk)
    saved = Checkpoints(tmp_path / "ckpt", every=1, fingerprint="run")
    saved.save_in_background({"step": 1})
    with pytest.raises(OSError, match="No space left"):
        saved.wait()
    saved.wait()  # raised once
