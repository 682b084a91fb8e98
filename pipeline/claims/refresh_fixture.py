"""Refresh the registry's fixture (measurement_pins.FIXTURE) from a run: the files the
claims read for the fixture's tasks and seed, and no others.

Every claim declared for `FIXTURE_TASKS` (with the relations the run's syntax stage scored)
is judged on the run as the claims stage judges it, gates included, its files noted as
they are read; those files are copied into a
new fixture folder, which then replaces the old one whole (a failed refresh leaves the old
one in place). A claim that needs new inputs (a new key in a stage's metrics, a new table)
brings them into the fixture with one command:

    python -m pipeline.claims.refresh_fixture outputs

The fixture's numbers enter the registry's digest, so a refresh that changes any of them
needs the next registry version (`python -m pipeline.claims.registry --draft`).
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from pipeline.analyses.clark_syntax.results import UdMetrics
from pipeline.claims.evaluate import declared_claims, evaluate
from pipeline.claims.measurement_pins import FIXTURE, FIXTURE_SEED, FIXTURE_TASKS
from pipeline.claims.outputs import StageOutputs
from pipeline.core.errors import PipelineError


class RecordingOutputs(StageOutputs):
    """A run's results, noting every file read (`files`, relative to the run's folder)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.files: set[Path] = set()

    def _flat(self, stage: str, where: tuple[str, ...]) -> tuple[Mapping, str]:
        found = super()._flat(stage, where)
        self.files.add(Path(found[1]).relative_to(self.root))
        return found

    def _csv(self, stage: str, where: tuple[str, ...], name: str) -> tuple[pd.DataFrame, str]:
        found = super()._csv(stage, where, name)
        self.files.add(Path(found[1]).relative_to(self.root))
        return found


def files_read(run: Path) -> set[Path]:
    """The files of `run` the fixture's claims read (relative to `run`)."""
    out = RecordingOutputs(run)
    relations = out.read(UdMetrics).scored_relations()
    evaluate(declared_claims(FIXTURE_TASKS, relations), out, [FIXTURE_SEED])
    return out.files


def refresh(run: Path, fixture: Path = FIXTURE) -> set[Path]:
    """Replace `fixture` by the files of `run` that `files_read` names; returns them."""
    if not (run / "metrics").is_dir():
        raise PipelineError(
            f"refresh_fixture: {run} holds no metrics/; give a run's outputs folder"
        )
    files = files_read(run)
    fresh = fixture.with_name(fixture.name + ".new")
    shutil.rmtree(fresh, ignore_errors=True)
    for file in sorted(files):
        (fresh / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(run / file, fresh / file)
    old = fixture.with_name(fixture.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if fixture.exists():
        fixture.rename(old)
    fresh.rename(fixture)
    shutil.rmtree(old, ignore_errors=True)
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a run's outputs folder (e.g. outputs)")
    args = parser.parse_args()
    files = refresh(args.run)
    print(f"{FIXTURE.name}: {len(files)} files from {args.run}")


if __name__ == "__main__":
    main()
