"""Shared fixtures: offline data location, tokenizer, and tiny random BERTs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from omegaconf import OmegaConf
from transformers import AutoModelForSequenceClassification, BertConfig, PreTrainedModel

from pipeline.core.config import CONF_DIR
from pipeline.models.loading import load_tokenizer

REPO = Path(__file__).resolve().parent.parent
torch.set_num_threads(min(2, torch.get_num_threads()))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The offline data sets (../shared/data, or $DARK_SECRETS_DATA)."""
    path = Path(os.environ.get("DARK_SECRETS_DATA", REPO.parent / "shared" / "data"))
    if not path.exists():
        pytest.skip(f"offline data not found at {path}")
    return path


@pytest.fixture(scope="session")
def tiny_model_cfg():
    return OmegaConf.load(CONF_DIR / "model" / "tiny_random.yaml")


@pytest.fixture(scope="session")
def minilm_cfg():
    return OmegaConf.load(CONF_DIR / "model" / "minilm_l6.yaml")


@pytest.fixture(scope="session")
def tokenizer(minilm_cfg):
    """The uncased WordPiece tokenizer shipped with the MiniLM package."""
    return load_tokenizer(minilm_cfg)


def run_ok(args: list[str], cwd: Path, env: dict[str, str], timeout: int = 1800) -> str:
    """Run a command; fail the test with its output tails unless it exits 0 within `timeout` s."""
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, (
        f"{' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result.stdout


def copy_project(root: Path) -> None:
    """Copy the project's files (no outputs, prepared data or dvc.lock) to `root`."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True
    ).stdout.split()
    for name in listed:
        if name.startswith(("outputs/", "data/glue")) or name == "dvc.lock":
            continue
        if (REPO / name).is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, root / name)


def micro_git_repo(root: Path, shared_data: Path, *overrides: str) -> dict[str, str]:
    """Copy the project's files into a fresh git repo at `root`, composed for the micro
    profile (plus `overrides`, e.g. `model=tiny_albert`) and committed; return the
    environment to run `dvc` and the stages in it."""
    copy_project(root)
    env = {**os.environ, "DARK_SECRETS_DATA": str(shared_data), "PYTHONPATH": str(root)}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    for command in (
        ["git", "init", "-q"],
        ["git", "config", "user.email", "ci@example.com"],
        ["git", "config", "user.name", "ci"],
        [sys.executable, "-m", "pipeline.core.params", "experiment=micro", *overrides],
        ["git", "add", "-A"],
        ["git", "commit", "-qm", "micro"],
    ):
        run_ok(command, root, env)
    return env


def small_bert() -> PreTrainedModel:
    """A seeded random BERT classifier of 2 layers x 3 heads, no dropout (eval mode), with
    large enough weights that attention maps differ visibly between heads."""
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=40, hidden_size=24, num_hidden_layers=2, num_attention_heads=3,
        intermediate_size=32, max_position_embeddings=16, num_labels=2,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, initializer_range=0.3,
    )  # fmt: skip
    return AutoModelForSequenceClassification.from_config(config).eval()
