"""The pattern-CNN benchmark's arithmetic floor: its products are the network's convolutions."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from benchmarks.bench_patterns import (
    best_rate,
    convolution_products,
    settings_of,
    stage_map_passes,
)
from pipeline.kovaleva.patterns.cnn import IN_CHANNELS, PatternCNN
from pipeline.kovaleva.patterns.train import train_classifier
from tests.support.paths import REPO


def _forward_flop(settings, batch: int) -> list[int]:
    """Each convolution's forward FLOP on `batch` maps, counted by hooks on a PatternCNN."""
    counts: list[int] = []

    def count(module: nn.Conv2d, inputs: tuple[torch.Tensor], out: torch.Tensor) -> None:
        counts.append(2 * out.numel() * module.in_channels * 9)

    net = PatternCNN(settings.channels)
    for module in net.features:
        if isinstance(module, nn.Conv2d):
            module.register_forward_hook(count)
    net(torch.zeros(batch, IN_CHANNELS, settings.input_size, settings.input_size))
    return counts


def test_the_products_are_forward_weight_and_input_gradients_of_every_convolution():
    settings = settings_of("classifier")
    networks = 3
    products = convolution_products(settings, networks)
    forward = _forward_flop(settings, settings.batch_size)
    flop = [2 * a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2] for a, b in products]
    layers = len(settings.channels)
    assert len(products) == 3 * layers - 1  # no input gradient for the first layer
    assert sum(flop) == networks * (3 * sum(forward) - forward[0])
    for left, right in products:
        assert left.shape[0] == right.shape[0] == networks and left.shape[2] == right.shape[1]


def test_best_rate_divides_the_product_flop_by_the_best_time_of_one_call(monkeypatch):
    clock = iter([0.0, 0.02, 1.0, 1.3, 2.0, 2.2, 3.0, 3.6])  # warm-up, then 3 timings
    monkeypatch.setattr("benchmarks.bench_patterns.time.process_time", lambda: next(clock))
    left, right = torch.randn(2, 8, 16), torch.randn(2, 16, 32)
    calls = 3  # as many as take 50 ms, after a 20 ms warm-up
    rate = best_rate(left, right, repeat=3)  # GFLOP/s
    assert rate == pytest.approx(2 * 2 * 8 * 16 * 32 / (0.2 / calls) / 1e9)


def test_the_stage_map_passes_are_those_of_the_stage_s_jobs():
    settings = settings_of("classifier")
    recorded = []

    def record(inputs, labels, settings, jobs, workers):  # untrained networks, jobs kept
        recorded.extend(jobs)
        return [PatternCNN(settings.channels) for _ in jobs]

    folder = REPO / "data" / "annotations" / "minilm_l6"
    trained = train_classifier([folder], settings, settings_of("heuristic"), 42, record)
    maps = len(trained.labelled.labels)
    passes = settings.epochs * sum(len(job.rows) for job in recorded)
    assert stage_map_passes(settings, maps) == passes
