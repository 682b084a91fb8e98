"""A finetune stage killed anywhere and run again writes the same bytes as one that never
stopped: the whole model folder (weights, config.json, tokenizer), the metrics and the tables.

The stage runs on a tiny random BERT with three variants (finetuned, pretrained,
random_init), checkpointing every 3 steps; a kill is a raise from the loop's batch iterator
after a given number of batches, training and scoring together, so the kill points fall
inside a variant's training (before and after its first checkpoint), after a variant has
finished training (while it is scored) and between variants.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

from pipeline.core.config import CONF_DIR
from pipeline.core.stage import StageRun
from pipeline.models import training
from stages import finetune as finetune_stage
from tests.support.builders import composed

WORDS = ["good", "bad", "film", "plot", "actors", "boring", "fun", "long"]
TRAIN_ROWS, EVAL_ROWS, BATCH = 24, 8, 4  # 6 steps per trained variant, one scoring batch
# batches in order: finetuned trains 1-6 and is scored (7), pretrained is scored (8),
# random_init trains 9-14 and is scored (15); a kill after k batches stops before batch k+1
KILL_AFTER = (2, 4, 6, 7, 11, 14)


class Killed(BaseException):
    """Stands for a kill (BaseException, as KeyboardInterrupt is)."""


def write_task_data(root: Path, task: str) -> None:
    """Random sentences with labels (STS-B: scores 0-5) as the prepare stage writes them."""
    rng = np.random.default_rng(1)
    for split, size in (("train", TRAIN_ROWS), ("validation", EVAL_ROWS)):
        folder = root / "glue" / task
        folder.mkdir(parents=True, exist_ok=True)
        text = {
            column: [" ".join(rng.choice(WORDS, size=6)) for _ in range(size)]
            for column in (("sentence1", "sentence2") if task == "stsb" else ("sentence",))
        }
        labels = rng.uniform(0, 5, size) if task == "stsb" else rng.integers(0, 2, size)
        pd.DataFrame({"idx": range(size), **text, "label": labels}).to_parquet(
            folder / f"{split}.parquet"
        )


def stage_run(root: Path, task: str) -> StageRun:
    cfg = composed(
        "model=tiny_random",
        "finetune.epochs=1",
        f"finetune.batch_size={BATCH}",
        "finetune.checkpoint_every=3",
    )
    cfg.paths.outputs, cfg.paths.data = str(root / "outputs"), str(root / "data")
    cfg.task = OmegaConf.load(CONF_DIR / "task" / f"{task}.yaml")
    cfg.device = "cpu"
    write_task_data(root / "data", task)
    return StageRun(cfg=cfg, out_root=root / "outputs", under_dvc=True)


def folder_digest(folder: Path) -> dict[str, str]:
    """SHA-256 of every file under `folder`, by its path within it."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def written(root: Path) -> dict[str, str]:
    """Every file the stage wrote (its checkpoints are gone once it finished)."""
    outputs = root / "outputs"
    assert not (outputs / "checkpoints" / "finetune").exists() or not any(
        (outputs / "checkpoints" / "finetune").rglob("*.pt")
    )
    return {k: v for k, v in folder_digest(outputs).items() if not k.startswith("timings")}


@pytest.fixture(scope="module", params=["sst2", "stsb"])
def uninterrupted(request, tmp_path_factory) -> tuple[str, dict[str, str]]:
    root = tmp_path_factory.mktemp(f"uninterrupted-{request.param}")
    finetune_stage.run(stage_run(root, request.param))
    return request.param, written(root)


@pytest.mark.parametrize("kill_after", KILL_AFTER)
def test_a_killed_finetune_writes_the_uninterrupted_bytes(
    uninterrupted, tmp_path, monkeypatch, kill_after
) -> None:
    task, expected = uninterrupted
    real, seen = training.padded_batches, {"batches": 0}

    def batches(*args, **kwargs):
        for item in real(*args, **kwargs):
            if seen["batches"] == kill_after:
                raise Killed
            seen["batches"] += 1
            yield item

    with monkeypatch.context() as patch:
        patch.setattr(training, "padded_batches", batches)
        with pytest.raises(Killed):
            finetune_stage.run(stage_run(tmp_path, task))
    assert not (tmp_path / "outputs" / "models").exists()  # killed before writing
    finetune_stage.run(stage_run(tmp_path, task))
    got = written(tmp_path)
    model = [k for k in expected if k.startswith("models/")]
    assert model and {k: got.get(k) for k in model} == {k: expected[k] for k in model}
    assert got == expected
