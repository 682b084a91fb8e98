"""Shared fixtures: offline data location, tokenizer, the tiny random BERT's config, and the
micro profile as single stages (`micro_stage`) or as a committed git repo (`micro_repo`).
Tiny BERTs built from a shape and configs composed once per session: tests/support/builders.py.
Toy analysis packages scanned for one test (`toy_analyses`): tests/support/toy_analysis.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from pipeline.core.schema import load_model
from pipeline.core.stage import StageRun
from pipeline.models import loading
from pipeline.models.loading import load_tokenizer
from tests.support.builders import micro_run
from tests.support.paths import shared_data_folder
from tests.support.repos import micro_git_repo
from tests.support.toy_analysis import scanned

torch.set_num_threads(min(2, torch.get_num_threads()))


@pytest.fixture(autouse=True)
def no_hub(monkeypatch) -> None:
    """Tests never reach the Hugging Face hub: a hub id loads as if it were out of reach."""
    monkeypatch.setattr(loading, "_hub_reachable", lambda: False)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The offline data sets, skipped where missing (failed in CI): shared_data_folder."""
    return shared_data_folder()


@pytest.fixture(scope="session")
def tiny_model_cfg():
    """conf/model/tiny_random.yaml: the micro profile's random BERT (2 layers x 4 heads, the
    tokenizer's vocabulary), built by the project's loader (pipeline/models/loading.py)."""
    return load_model("tiny_random")


@pytest.fixture(scope="session")
def minilm_cfg():
    return load_model("minilm_l6")


@pytest.fixture(scope="session")
def tokenizer(minilm_cfg):
    """The uncased WordPiece tokenizer shipped with the MiniLM package."""
    return load_tokenizer(minilm_cfg)


@pytest.fixture(scope="module")
def micro_repo(tmp_path_factory, shared_data) -> tuple[Path, dict[str, str]]:
    """(root, env): the project's files in a fresh git repo, composed for the micro profile
    and committed, with the environment to run `dvc` and the stages in it."""
    root = tmp_path_factory.mktemp("micro") / "repo"
    return root, micro_git_repo(root, shared_data)


MicroStage = Callable[..., StageRun]


@pytest.fixture
def micro_stage(tmp_path: Path) -> MicroStage:
    """Makes one stage's run of the micro profile on the CPU, as DVC runs it, with
    `paths.data` and `paths.outputs` under the test's tmp_path: `micro_stage(task, settings)`
    takes the task of a per-task stage (or none) and settings by dotted key."""

    def make(task: str | None = None, settings: dict[str, Any] | None = None) -> StageRun:
        return micro_run(tmp_path / "data", tmp_path / "outputs", task, settings)

    return make


@pytest.fixture
def toy_analyses(tmp_path: Path) -> Iterator[Path]:
    """A folder of toy analysis packages (tests/support/toy_analysis.py's `write_toy`) that
    pipeline.analyses scans and imports from for the test's duration, and no longer after."""
    root = tmp_path / "analyses"
    root.mkdir()
    with scanned(root):
        yield root
