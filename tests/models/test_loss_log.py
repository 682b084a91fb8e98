"""The loss curve: each point is the mean of the window's per-step losses, as the loop logged
them when it read every loss at once; the loop now reads them from the device once per log
line, not once per step."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

from pipeline.models import training
from tests.support.training_runs import SETTINGS, fresh_model, random_rows, run


@pytest.fixture(scope="module")
def data():
    return random_rows()


def test_each_point_is_the_mean_of_its_windows_step_losses(tiny_model_cfg, tokenizer, data):
    model = fresh_model(tiny_model_cfg, tokenizer)
    losses = []  # every step's loss, read here (the loop itself does not)
    model.register_forward_hook(lambda module, args, out: losses.append(out.loss.item()))
    curve = run(model, data)
    every = SETTINGS.log_every
    assert len(losses) == 16 and [s for s, _ in curve] == list(range(every, 17, every))
    expected = [float(np.mean(losses[s - every : s])) for s, _ in curve]
    assert [loss for _, loss in curve] == expected  # equal, not close


def test_the_loop_reads_losses_once_per_log_line(tiny_model_cfg, tokenizer, data, monkeypatch):
    reads, item_calls = [], []
    real_window, real_item = training.window_losses, torch.Tensor.item

    def counted(running):
        reads.append(len(running))
        return real_window(running)

    def item(tensor):  # a read of one value from the device, called from the loop itself
        if sys._getframe(1).f_code.co_filename == training.__file__:
            item_calls.append(tensor)
        return real_item(tensor)

    monkeypatch.setattr(training, "window_losses", counted)
    monkeypatch.setattr(torch.Tensor, "item", item)
    run(fresh_model(tiny_model_cfg, tokenizer), data)
    assert reads == [SETTINGS.log_every] * (16 // SETTINGS.log_every)
    assert not item_calls
