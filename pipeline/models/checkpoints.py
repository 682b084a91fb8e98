"""Resumable fine-tuning: the last training state of one run, in one file, and its fingerprint.

A checkpoint holds everything the next step depends on: weights, optimizer, scheduler and
gradient scaler states, the torch (CPU and CUDA), numpy and python random states, the number
of steps done (which fixes the position in the seeded data order) and the loss curve so far.
Restored, a run continues exactly as if it had never stopped (bit-identical on CPU).

The file carries a fingerprint of the settings and data that produced it; a run whose
fingerprint differs (a changed config or data set) never resumes from it: it starts fresh
and says so in one log line. Checkpoints live outside DVC's outputs (DVC deletes a stage's
outputs before it runs) and are removed when the stage has written its outputs.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pipeline.core.io import atomic_path

log = logging.getLogger(__name__)

FILE = "checkpoint.pt"


def fingerprint(settings: Any, rows: list[dict[str, list[int]]], labels: np.ndarray) -> str:
    """sha256 of `settings` (anything JSON can write, e.g. a dict of the run's config) and of
    the encoded training data (every row's ids, then the labels)."""
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode())
    for row in rows:
        for key in sorted(row):
            digest.update(key.encode())
            digest.update(np.asarray(row[key], dtype=np.int64).tobytes())
    digest.update(np.ascontiguousarray(labels).tobytes())
    return digest.hexdigest()


def random_states() -> dict[str, Any]:
    """Every random state a training step may draw from."""
    return {
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        "numpy": np.random.get_state(),
        "python": random.getstate(),
    }


def restore_random_states(states: dict[str, Any]) -> None:
    torch.set_rng_state(states["torch"])
    if states["cuda"]:
        torch.cuda.set_rng_state_all(states["cuda"])
    np.random.set_state(states["numpy"])
    random.setstate(states["python"])


@dataclass(frozen=True)
class Checkpoints:
    """Where one training run keeps its last state, how often, and under which fingerprint."""

    folder: Path
    every: int  # steps between checkpoints; 0 = never
    fingerprint: str
    writing: list[threading.Thread] = field(default_factory=list, compare=False, repr=False)
    failed: list[BaseException] = field(default_factory=list, compare=False, repr=False)

    @property
    def path(self) -> Path:
        return self.folder / FILE

    def due(self, step: int, total: int) -> bool:
        """Save after this step? Every `every` steps, and after the last one (so a stage
        killed after this run finished does not train it again)."""
        return self.every > 0 and (step % self.every == 0 or step == total)

    def save(self, state: dict[str, Any]) -> None:
        """Replace the last checkpoint by `state` (atomically: a kill leaves the old one)."""
        with atomic_path(self.path) as tmp:
            torch.save({**state, "fingerprint": self.fingerprint}, tmp)

    def save_in_background(self, state: dict[str, Any]) -> None:
        """`save` a copy of `state` from a thread, so the loop goes on while the file is
        written: its tensors are copied to the host first (the one wait for the device), and
        a save waits for the one before it. Call `wait` before reading the file."""
        snapshot = host_copy(state)
        self.wait()
        writer = threading.Thread(target=self._save_noting_failure, args=(snapshot,))
        self.writing.append(writer)
        writer.start()

    def _save_noting_failure(self, state: dict[str, Any]) -> None:
        try:
            self.save(state)
        except BaseException as error:  # raised again by `wait`, in the loop's thread
            self.failed.append(error)

    def wait(self) -> None:
        """Return once every background save has finished writing; raise what a save
        raised."""
        while self.writing:
            self.writing.pop().join()
        if self.failed:
            raise self.failed.pop()

    def load(self) -> dict[str, Any] | None:
        """The last state saved under this fingerprint; None (after removing a stale one)."""
        if self.every <= 0 or not self.path.exists():
            return None
        # weights_only=False: the file holds numpy/python random states; this run wrote it
        state = torch.load(self.path, map_location="cpu", weights_only=False)
        if state.get("fingerprint") != self.fingerprint:
            log.info("%s: settings or data changed since it was saved; starting fresh", self.path)
            self.path.unlink()
            return None
        log.info("%s: resuming after step %d", self.path, state["step"])
        return state


def host_copy(state: Any) -> Any:
    """`state` with every tensor copied to the host (CPU), so that training can go on
    changing its own tensors while the copy is written; containers are copied too."""
    if isinstance(state, torch.Tensor):
        return state.detach().to("cpu", copy=True)
    if isinstance(state, dict):
        return {key: host_copy(value) for key, value in state.items()}
    if isinstance(state, (list, tuple)):
        return type(state)(host_copy(value) for value in state)
    return state


def remove_checkpoints(folder: Path) -> None:
    """Delete a stage's checkpoints once its outputs are written."""
    shutil.rmtree(folder, ignore_errors=True)
