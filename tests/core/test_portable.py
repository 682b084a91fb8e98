"""The pattern CNN's inputs, weights and predictions do not depend on the CPU's vector kernels.

Two networks train as one batched model (`train.fit_stack`), as the stage trains them.

Another CPU is emulated on this one through each library's own switch (oneDNN limited to
SSE4.1, ATen to its baseline kernels, MKL to SSE4.2); without `use_portable_kernels` the
first two change the digest."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.paths import REPO

TRAIN_AND_DIGEST = """
import hashlib
import numpy as np, torch
from pipeline.core.portable import use_portable_kernels
from pipeline.core.schema import PatternClassifier
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.cnn import inputs_of, pairs_of, predict
from pipeline.kovaleva.patterns.train import Job, fit_all
from pipeline.kovaleva.patterns.mapsets import LabelledMap

use_portable_kernels()
settings = PatternClassifier(
    input_size=16, channels=[4, 4, 8, 8], dropout=0.3, folds=2, ensemble=1, cv_ensemble=1,
    workers=1, stack=2, bootstrap_resamples=10, epochs=4, batch_size=16, learning_rate=3e-3,
    average_last=2, threads=1,
)
rng = np.random.default_rng(0)
maps = []
for n in rng.integers(6, 30, size=64):
    scores = rng.normal(size=(n, n)).astype(np.float32)
    weights = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    maps.append(LabelledMap(weights, ("[CLS]", *["w"] * (n - 3), "[SEP]", "v", "[SEP]")))
inputs = inputs_of(maps, 16)
labels = np.array([CLASSES[i % len(CLASSES)] for i in range(64)])
jobs = [Job(np.arange(64), seed=3), Job(np.arange(64), seed=4)]
networks = fit_all(inputs, labels, settings, jobs, workers=1)
probabilities = predict(networks, inputs, pairs_of(maps))
state = b"".join(t.numpy().tobytes() for n in networks for t in n.state_dict().values())
print(hashlib.sha256(state + probabilities.numpy().tobytes()).hexdigest())
"""

EMULATED_CPUS = {
    "onednn-sse41": {"ONEDNN_MAX_CPU_ISA": "SSE41"},
    "aten-default": {"ATEN_CPU_CAPABILITY": "default"},
    "mkl-sse42": {"MKL_ENABLE_INSTRUCTIONS": "SSE4_2"},
}


def weights_digest(cpu: dict[str, str]) -> str:
    """The digest of two networks' inputs, weights and predictions, computed by a process
    whose kernels are limited by `cpu`."""
    clean = {k: v for k, v in os.environ.items() if k not in ("ATEN_CPU_CAPABILITY", "MKL_CBWR")}
    env = {**clean, **cpu, "PYTHONPATH": str(REPO)}
    run = subprocess.run(
        [sys.executable, "-c", TRAIN_AND_DIGEST],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return run.stdout.strip()


@pytest.fixture(scope="module")
def native_digest() -> str:
    return weights_digest({})


@pytest.mark.parametrize("cpu", list(EMULATED_CPUS))
def test_the_cnn_gives_the_same_bits_on_an_emulated_older_cpu(native_digest, cpu) -> None:
    assert weights_digest(EMULATED_CPUS[cpu]) == native_digest
