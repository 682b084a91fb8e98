"""The stages' results the claims read, as typed results (pipeline/core/results.py): a claim
asks for a results type and the run it covers, `out.read(AblateMetrics, task, seed)`, and
gets an instance; it never names a path or a key.

`StageOutputs` reads them from the files under an outputs folder (where
pipeline/core/layout.py puts them); `SyntheticOutputs` holds instances made in memory (a
claim's synthetic cases, the registry's grids).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

import pandas as pd

from pipeline.core import layout
from pipeline.core.errors import PipelineError
from pipeline.core.results import Metrics, Results, Table

R = TypeVar("R", bound=Results)


class StageOutputs:
    """Read-only typed access to `<root>/metrics/**.json` and `<root>/plots/**.csv`; a
    missing file, field or column fails in one line naming it and the stage to run. Each
    result is read once (many claims read the same one)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._read: dict[tuple, Results] = {}

    def read(self, kind: type[R], *run: str | int) -> R:
        """The results of type `kind` for the run `run` names (task and seed, as far as
        `kind.covers` says: `read(AblateMetrics, "sst2", 42)`, `read(UdMetrics)`)."""
        where = kind.covers.where(kind, run)
        if (kind, where) not in self._read:
            self._read[(kind, where)] = self._parse(kind, where)
        return self._read[(kind, where)]  # type: ignore[return-value]

    def has(self, kind: type[Results], *run: str | int) -> bool:
        """Whether the results of `kind` for `run` exist (for inputs a table can do without)."""
        where = kind.covers.where(kind, run)
        if issubclass(kind, Table):
            return self._has_csv(kind.stage, where, kind.name)
        return self._has_flat(kind.stage, where)

    def _parse(self, kind: type[Results], where: tuple[str, ...]) -> Results:
        if issubclass(kind, Table):
            frame, place = self._csv(kind.stage, where, kind.name)
            return kind.from_frame(frame, place)
        if issubclass(kind, Metrics):
            flat, place = self._flat(kind.stage, where)
            return kind.read(flat, place)
        raise TypeError(f"{kind.__name__} is neither a Metrics nor a Table results type")

    # the files, by stage and folder: a subclass reading another layout overrides these

    def _flat(self, stage: str, where: tuple[str, ...]) -> tuple[Mapping, str]:
        path = layout.metrics(self.root, stage, *where)
        if not path.exists():
            raise PipelineError(f"claims: {path} is missing; run `dvc repro {stage}` first")
        return json.loads(path.read_text()), str(path)

    def _has_flat(self, stage: str, where: tuple[str, ...]) -> bool:
        return layout.metrics(self.root, stage, *where).exists()

    def _csv_path(self, stage: str, where: tuple[str, ...], name: str) -> Path:
        return layout.results(self.root, "plots", stage, *where) / f"{name}.csv"

    def _has_csv(self, stage: str, where: tuple[str, ...], name: str) -> bool:
        return self._csv_path(stage, where, name).exists()

    def _csv(self, stage: str, where: tuple[str, ...], name: str) -> tuple[pd.DataFrame, str]:
        path = self._csv_path(stage, where, name)
        if not path.exists():
            raise PipelineError(f"claims: {path} is missing; run `dvc repro {stage}` first")
        return pd.read_csv(path), str(path)


class SyntheticOutputs(StageOutputs):
    """Typed results made in memory, by type and run: `{(AblateMetrics, "sst2", 42):
    AblateMetrics(...)}`; a result it lacks fails in one line."""

    def __init__(self, results: Mapping[tuple, Results]) -> None:
        super().__init__(Path("synthetic"))
        self._held = {
            (run[0], run[0].covers.where(run[0], tuple(run[1:]))): value
            for run, value in results.items()
        }

    def read(self, kind: type[R], *run: str | int) -> R:
        where = kind.covers.where(kind, run)
        if (kind, where) not in self._held:
            raise PipelineError(f"claims: the synthetic results hold no {kind.__name__} {run}")
        return self._held[(kind, where)]  # type: ignore[return-value]

    def has(self, kind: type[Results], *run: str | int) -> bool:
        return (kind, kind.covers.where(kind, run)) in self._held
