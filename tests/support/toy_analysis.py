"""A toy analysis package written into a temporary folder, and that folder scanned beside
pipeline/analyses/ (appended to the package's `__path__`, pipeline/analyses/__init__.py):
in this process for a block's duration (`scanned`, the `toy_analyses` fixture of
tests/conftest.py), or in a Python snippet run apart (`run_scanned`). A stage run by
`python -m` or DVC finds a toy written into a copy of the project instead
(`write_toy(copy / "pipeline/analyses")`, `write_values(copy)`: tests/support/repos.py)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pipeline import analyses
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

RESULTS = """from dataclasses import dataclass

from pipeline.core.results import Covers, Metrics
from pipeline.core.stats import Interval


@dataclass(frozen=True)
class ToyMetrics(Metrics):
    stage = "{stage}"
    covers = Covers.TASK_SEED

    scaled_labels: Interval
"""

CLAIMS = """from pipeline.analyses.{name}.results import ToyMetrics
from pipeline.claims.cases import SEED, Case, interval
from pipeline.claims.claim import Claim, Scope, Source
from pipeline.claims.rules import Beyond, Estimate
from pipeline.claims.thresholds import DIRECTION

SETTINGS = {{"extension.toy_labels": ("{group}",)}}


def toy_labels(task):
    return Claim(
        name=f"extension.toy_labels.{{task}}",
        source=Source("A toy paper", "Sec. 1", "every task has labels"),
        finding=f"{{task}} has labels",
        statistic="the task's label count, scaled",
        rule=Beyond(DIRECTION),
        measure=lambda out, seed: Estimate.of(out.read(ToyMetrics, task, seed).scaled_labels),
        extension=True,
    )


def claims(scope: Scope) -> list[Claim]:
    return [toy_labels(t) for t in scope.tasks]


def cases() -> list[Case]:
    held = {{(ToyMetrics, "sst2", SEED): ToyMetrics(interval(6.0, 1.0))}}
    return [Case("extension.toy_labels.sst2", "supported", held, "six labels, give or take one")]
"""


def write_toy(
    root: Path, name: str = "toy", group: str = "toy", stage: str = "toy", reads: str = "ablate"
) -> Path:
    """Package `name` under `root`: it owns config group `group` and declares stage `stage`,
    which reads the metrics of stage `reads`, a report section between the claims', the
    results its stage writes and a claim on them, with its synthetic case."""
    package = root / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(f'"""{name}: a toy analysis."""\n')
    (package / "settings.py").write_text(SETTINGS.format(group=group))
    (package / "declaration.py").write_text(
        DECLARATION.format(stage=stage, group=group, reads=reads)
    )
    (package / "results.py").write_text(RESULTS.format(stage=stage))
    (package / "claims.py").write_text(CLAIMS.format(name=name, group=group))
    return package


def write_values(root: Path, group: str = "toy") -> None:
    """conf/<group>/default.yaml under `root`: the values of a toy's group."""
    (root / "conf" / group).mkdir(parents=True)
    (root / "conf" / group / "default.yaml").write_text("scale: 3\n")


@contextmanager
def scanned(*roots: Path) -> Iterator[None]:
    """Within the block, the packages under `roots` are analyses: `names()` lists them and
    they import as `pipeline.analyses.<name>`. After it, neither, and no module of theirs
    stays imported."""
    added = [str(root) for root in roots]
    analyses.__path__.extend(added)
    importlib.invalidate_caches()
    try:
        yield
    finally:
        for entry in added:
            analyses.__path__.remove(entry)
        for name, module in list(sys.modules.items()):
            file = getattr(module, "__file__", None)
            if file and any(Path(file).is_relative_to(root) for root in roots):
                del sys.modules[name]
                parent, _, child = name.rpartition(".")
                if parent == analyses.__name__ and hasattr(analyses, child):
                    delattr(analyses, child)


SCAN = "import pipeline.analyses\npipeline.analyses.__path__.append({root!r})\n"


def run_scanned(root: Path, code: str) -> subprocess.CompletedProcess:
    """Run Python `code` in the project with `root` scanned for analysis packages too (its
    first lines append `root` to pipeline.analyses' `__path__`)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    script = SCAN.format(root=str(root)) + code
    return subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True
    )
