"""A toy analysis package written into a temporary folder that $DARK_SECRETS_ANALYSES names
(pipeline/analyses/__init__.py), and a Python snippet run with that folder scanned."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pipeline.analyses import EXTRA_ROOTS
from tests.support.paths import REPO

SETTINGS = """from dataclasses import dataclass

from omegaconf import MISSING

from pipeline.analyses.groups import Settings


@dataclass
class ToyConfig:
    scale: int = MISSING


SETTINGS = Settings("{group}", ToyConfig)
"""

DECLARATION = """from pipeline.analyses.analysis import Analysis, Section
from pipeline.dag.stage_types import Per, Stage, Upstream

ANALYSIS = Analysis(
    stage=Stage("{stage}", Per.TASK_SEED, ("{group}",), inputs=(Upstream("{reads}", "metrics"),)),
    section=Section("Toy: the label names of each task", 15),
)
"""


def write_toy(
    root: Path, name: str = "toy", group: str = "toy", stage: str = "toy", reads: str = "ablate"
) -> Path:
    """Package `name` under `root`: it owns config group `group` and declares stage `stage`,
    which reads the metrics of stage `reads`, and a report section between the claims'."""
    package = root / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(f'"""{name}: a toy analysis."""\n')
    (package / "settings.py").write_text(SETTINGS.format(group=group))
    (package / "declaration.py").write_text(
        DECLARATION.format(stage=stage, group=group, reads=reads)
    )
    return package


def write_values(root: Path, group: str = "toy") -> None:
    """conf/<group>/default.yaml of an extra root's group."""
    (root / "conf" / group).mkdir(parents=True)
    (root / "conf" / group / "default.yaml").write_text("scale: 3\n")


def run_scanned(root: Path, code: str) -> subprocess.CompletedProcess:
    """Run Python `code` in the project with `root` scanned for analysis packages too."""
    env = {**os.environ, EXTRA_ROOTS: str(root), "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True
    )
