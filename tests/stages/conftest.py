"""Fixtures the stage tests share."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.core.stage import StageRun
from stages import prepare
from tests.support.builders import composed


@pytest.fixture(scope="module")
def micro_data(tmp_path_factory, shared_data) -> Path:
    """The micro profile's prepared GLUE subsets, written by the prepare stage itself."""
    root = tmp_path_factory.mktemp("micro")
    cfg = composed("experiment=micro")
    cfg.paths.data = str(root / "data")
    cfg.paths.shared_data = str(shared_data)
    prepare.run(StageRun(cfg=cfg, out_root=root / "outputs", under_dvc=True))
    return root / "data"
