"""The stages' results the claims read: flat metrics files and CSV tables under outputs/,
found where pipeline/core/layout.py puts them."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pipeline.claims.rules import Estimate
from pipeline.core import layout
from pipeline.core.errors import PipelineError


class StageOutputs:
    """Read-only access to `<root>/metrics/**.json` and `<root>/plots/**.csv`; a missing
    file or key fails in one line naming it and the stage to run. Each metrics file is read
    once (many claims read the same file)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._metrics: dict[Path, dict] = {}

    def metrics(self, stage: str, *where: str) -> dict:
        """The metrics file of `stage` (and its task and seed folder `where`)."""
        path = layout.metrics(self.root, stage, *where)
        if path not in self._metrics:
            self._metrics[path] = _read_json(path)
        return self._metrics[path]

    def has_metrics(self, stage: str, *where: str) -> bool:
        """Whether `stage`'s metrics file exists (for inputs a table can do without)."""
        return layout.metrics(self.root, stage, *where).exists()

    def table(self, stage: str, *where_and_name: str) -> pd.DataFrame:
        """The table `<name>.csv` of `stage` (in its task and seed folder)."""
        *where, name = where_and_name
        path = layout.results(self.root, "plots", stage, *where) / f"{name}.csv"
        if not path.exists():
            raise PipelineError(f"claims: {path} is missing; run `dvc repro {stage}` first")
        return pd.read_csv(path)

    def value(self, metrics_file: tuple[str, ...], key: str) -> float:
        """One number of a metrics file."""
        values = self.metrics(*metrics_file)
        if key not in values:
            path = layout.metrics(self.root, *metrics_file)
            raise PipelineError(
                f"claims: {path} has no `{key}`; "
                f"re-run `dvc repro {metrics_file[0]}` with the current code"
            )
        return float(values[key])

    def interval(self, metrics_file: tuple[str, ...], key: str) -> Estimate:
        """`key` with its `key_ci_low` / `key_ci_high` from a metrics file."""
        return Estimate(
            *(self.value(metrics_file, key + suffix) for suffix in ("", "_ci_low", "_ci_high"))
        )


def _read_json(path: Path) -> dict:
    if not path.exists():
        raise PipelineError(f"claims: {path} is missing; run the stage that writes it first")
    return json.loads(path.read_text())
