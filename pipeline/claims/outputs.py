"""The stages' results the claims read: flat metrics files and CSV tables under outputs/."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pipeline.claims.rules import Measured
from pipeline.core.errors import PipelineError


class StageOutputs:
    """Read-only access to `<root>/metrics/**.json` and `<root>/plots/**.csv`; a missing
    file or key fails in one line naming it and the stage to run. Each metrics file is read
    once (many claims read the same file)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._metrics: dict[Path, dict] = {}

    def metrics(self, *parts: str) -> dict:
        """The metrics file outputs/metrics/<parts>.json."""
        path = self.root.joinpath("metrics", *parts[:-1], f"{parts[-1]}.json")
        if path not in self._metrics:
            self._metrics[path] = _read_json(path)
        return self._metrics[path]

    def has_metrics(self, *parts: str) -> bool:
        """Whether outputs/metrics/<parts>.json exists (for inputs a table can do without)."""
        return self.root.joinpath("metrics", *parts[:-1], f"{parts[-1]}.json").exists()

    def table(self, *parts: str) -> pd.DataFrame:
        """The table outputs/plots/<parts>.csv."""
        path = self.root.joinpath("plots", *parts[:-1], f"{parts[-1]}.csv")
        if not path.exists():
            raise PipelineError(f"claims: {path} is missing; run `dvc repro {parts[0]}` first")
        return pd.read_csv(path)

    def value(self, metrics_file: tuple[str, ...], key: str) -> float:
        """One number of a metrics file."""
        values = self.metrics(*metrics_file)
        if key not in values:
            where = "/".join(metrics_file)
            raise PipelineError(
                f"claims: outputs/metrics/{where}.json has no `{key}`; "
                f"re-run `dvc repro {metrics_file[0]}` with the current code"
            )
        return float(values[key])

    def interval(self, metrics_file: tuple[str, ...], key: str) -> Measured:
        """`key` with its `key_ci_low` / `key_ci_high` from a metrics file."""
        return Measured(
            *(self.value(metrics_file, key + suffix) for suffix in ("", "_ci_low", "_ci_high"))
        )


def _read_json(path: Path) -> dict:
    if not path.exists():
        raise PipelineError(f"claims: {path} is missing; run the stage that writes it first")
    return json.loads(path.read_text())
