"""The loop-against-Trainer benchmark on a tiny random BERT, on the CPU: its result's
structure, and that both sides trained on the same batches."""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pytest
import torch

from benchmarks.bench_cost import profile_params
from benchmarks.bench_step import step_settings
from benchmarks.bench_trainer import (
    BATCH_KEYS,
    SIDES,
    InOrderTrainer,
    grouping_padding,
    markdown,
    model_settings,
    run,
    split_rounds,
    trainer_arguments,
)
from pipeline.models.labelled import LabelledRows

STEPS, ROUNDS, BATCH = 3, 1, 4


@pytest.fixture(scope="module")
def result():
    args = argparse.Namespace(
        model=["tiny_random"], device="cpu", precision="fp32", profile="quick", task="rte",
        batch=BATCH, length=16, steps=STEPS, rounds=ROUNDS, threads=1, compile=False,
        deterministic=True,
    )  # fmt: skip
    was, seen = torch.are_deterministic_algorithms_enabled(), []
    real_train = InOrderTrainer.train

    def train(self, *a, **kw):  # the flag each Trainer call runs under
        seen.append(torch.are_deterministic_algorithms_enabled())
        return real_train(self, *a, **kw)

    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(InOrderTrainer, "train", train)
            measured = run(args)
    finally:
        torch.use_deterministic_algorithms(was)
    return measured | {"trainer_calls_deterministic": seen}


def test_both_sides_run_under_the_recorded_determinism_and_trainer_arguments(result):
    assert result["deterministic"] is True
    calls = result["trainer_calls_deterministic"]
    assert calls and all(calls)  # as the loop: not switched off for the Trainer's calls
    arguments = result["trainer_arguments"]
    assert arguments["optim"] == "adamw_torch_fused" and "output_dir" not in arguments
    assert arguments["per_device_train_batch_size"] == BATCH
    json.dumps(arguments)  # a record keeps them as JSON


def test_both_sides_train_on_the_same_batches(result):
    comparisons = result["comparisons"]
    assert [(c["model"], c["workload"]) for c in comparisons] == [
        ("tiny_random", f"fixed {BATCH} x 16"),
        ("tiny_random", "rte, length-grouped"),
    ]
    for c in comparisons:
        assert c["same_batches"] == [True] * ROUNDS
        loop, trainer = (c[side]["rounds"] for side in SIDES)
        assert len(loop) == len(trainer) == ROUNDS
        for mine, theirs in zip(loop, trainer, strict=True):
            assert {k: mine[k] for k in BATCH_KEYS} == {k: theirs[k] for k in BATCH_KEYS}
            assert mine["batches"] == STEPS and mine["examples"] == STEPS * BATCH
            assert mine["steady_examples"] == (STEPS - 2) * BATCH  # between first and last
            assert 0 < mine["real_tokens"] <= mine["padded_tokens"]
    fixed = comparisons[0]
    assert fixed["loop"]["rounds"][0]["padded_tokens"] == STEPS * BATCH * 16  # every row 16 long
    assert fixed["loop"]["rounds"][0]["real_tokens"] == STEPS * BATCH * 16


def test_rates_ratios_and_shares_follow_from_the_timings(result):
    peak = max(result["matmul_gflops"])
    assert len(result["matmul_gflops"]) == 2 and peak > 0
    for c in result["comparisons"]:
        for side in SIDES:
            s = c[side]
            (kept,) = s["rounds"]
            assert kept["setup_s"] >= 0 and kept["steady_s"] > 0
            assert kept["setup_s"] + kept["steady_s"] < kept["call_s"]  # disjoint spans
            assert math.isclose(s["step_s"], kept["steady_s"] / (STEPS - 2))
            assert math.isclose(s["examples_per_s"], kept["steady_examples"] / kept["steady_s"])
            assert math.isclose(s["gflops"], kept["steady_flops"] / kept["steady_s"] / 1e9)
            assert math.isclose(s["of_peak"], s["gflops"] / peak)
            assert math.isclose(s["call_examples_per_s"], kept["examples"] / kept["call_s"])
        ratio = c["loop"]["examples_per_s"] / c["trainer"]["examples_per_s"]
        assert math.isclose(c["loop_over_trainer"], ratio)
    table = markdown(result)
    assert table.count("| tiny_random |") == 4 and "| yes |" in table


def test_the_trainers_own_grouping_and_the_loops_are_reported(result):
    padding = result["padding"]
    assert padding["task"] == "rte" and padding["batch"] == BATCH
    names = ["loop: length_grouped_batches", "trainer: group_by_length"]
    assert [name for name in padding if name not in ("task", "batch")] == names
    for name in names:
        row = padding[name]
        assert row["padded_tokens"] >= row["real_tokens"] > 0
    lengths = [5, 3, 9, 7, 5, 3, 9, 7, 1]  # pairs of equal lengths, the shortest left over
    rows = grouping_padding(lengths, 2, seed=0)
    assert rows["trainer: group_by_length"]["real_tokens"] == sum(lengths)
    loop = rows["loop: length_grouped_batches"]  # the pairs batched, 1 alone: no padding
    assert loop["real_tokens"] == sum(lengths) and loop["padding"] == 0.0


def test_rounds_take_consecutive_batches_and_shaped_models_are_base_sized():
    data = LabelledRows([{"input_ids": [i]} for i in range(6)], np.arange(6))
    rounds = split_rounds(data, [[0, 1], [2, 3], [4, 5]], steps=1)
    assert [r.labels.tolist() for r in rounds] == [[0, 1], [2, 3], [4, 5]]
    two = split_rounds(data, [[5, 4], [3, 2], [1, 0]], steps=2)  # a third batch left over
    assert [r.labels.tolist() for r in two] == [[5, 4, 3, 2]]
    assert model_settings("mpnet-base-shaped").random_config == {"model_type": "mpnet"}
    assert model_settings("tiny_random").name == "tiny_random"


def test_the_trainer_gets_the_recipe_and_its_fastest_documented_options(tmp_path):
    settings = step_settings(profile_params("quick"), 8)
    cpu = torch.device("cpu")
    fp32 = trainer_arguments(settings, "fp32", cpu, False, str(tmp_path), seed=3)
    assert fp32.optim == "adamw_torch_fused" and not fp32.bf16 and not fp32.fp16
    assert (fp32.per_device_train_batch_size, fp32.learning_rate) == (8, settings.learning_rate)
    assert (fp32.weight_decay, fp32.max_grad_norm) == (settings.weight_decay, settings.grad_clip)
    assert fp32.lr_scheduler_type == "linear" and fp32.seed == 3
    assert not fp32.dataloader_pin_memory and not fp32.torch_compile  # pinning is for CUDA
    bf16 = trainer_arguments(settings, "bf16", cpu, True, str(tmp_path), seed=3)
    assert bf16.bf16 and not bf16.fp16 and bf16.torch_compile
