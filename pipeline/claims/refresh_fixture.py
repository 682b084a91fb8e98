"""Refresh the registry's fixture (measurement_pins.FIXTURE) from a run, one analysis's slice
at a time: the files the claims read for the fixture's tasks and seed, and no others.

The fixture is cut into slices, one per analysis: an analysis's slice is the fixture's files
its stage writes, as its typed results declare them (each results type of
`pipeline/analyses/<name>/results.py` names its `stage`, which is the analysis's name, and
the outputs' layout puts that stage's files under `metrics/<name>` and `plots/<name>/`).
Every claim declared for `FIXTURE_TASKS` is judged on the run as the claims stage judges it,
gates included, its files noted as they are read; the files of the analysis's stage among
them replace its slice, and every other file of the fixture is kept byte for byte. The new
fixture is built beside the old one, which it then replaces (a failed refresh leaves the old
one in place). A claim that needs new inputs (a new key in its stage's metrics, a new table)
brings them into the fixture with one command:

    python -m pipeline.claims.refresh_fixture outputs clark_heads

(`--all` refreshes every slice). The fixture's numbers enter the registry's digest, so a
refresh that changes any of them needs the next registry version (`python -m
pipeline.claims.registry --draft`).
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from pipeline import analyses
from pipeline.claims.evaluate import all_claims, evaluate
from pipeline.claims.measurement_pins import FIXTURE, FIXTURE_SEED, FIXTURE_TASKS
from pipeline.claims.outputs import StageOutputs
from pipeline.core.errors import PipelineError, exit_on_error


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
    evaluate(all_claims(out, FIXTURE_TASKS), out, [FIXTURE_SEED])
    return out.files


def stage_of(file: Path) -> str:
    """The stage that writes a results file, from its place (relative to a run's folder):
    `metrics/<stage>.json`, `metrics/<stage>/...` or `plots/<stage>/...`."""
    return Path(file.parts[1]).stem


def slice_files(fixture: Path, analysis: str) -> set[Path]:
    """The files of `analysis`'s slice of `fixture` (relative to it)."""
    held = (p.relative_to(fixture) for p in fixture.rglob("*") if p.is_file())
    return {file for file in held if stage_of(file) == analysis}


def refresh(run: Path, fixture: Path = FIXTURE, analysis: str | None = None) -> set[Path]:
    """Replace `analysis`'s slice of `fixture` (None: every slice) by the files of its stage
    in `run` that `files_read` names; returns the slice's new files."""
    if not (run / "metrics").is_dir():
        raise PipelineError(
            f"refresh_fixture: {run} holds no metrics/; give a run's outputs folder"
        )
    if analysis is not None and analysis not in analyses.names():
        raise PipelineError(
            f"refresh_fixture: no analysis {analysis!r} under pipeline/analyses; "
            "give a package's name"
        )
    ours = {f for f in files_read(run) if analysis is None or stage_of(f) == analysis}
    kept: set[Path] = set()
    if fixture.exists() and analysis is not None:
        held = {p.relative_to(fixture) for p in fixture.rglob("*") if p.is_file()}
        kept = held - slice_files(fixture, analysis)
    fresh = fixture.with_name(fixture.name + ".new")
    shutil.rmtree(fresh, ignore_errors=True)
    for source, file in [(run, f) for f in sorted(ours)] + [(fixture, f) for f in sorted(kept)]:
        (fresh / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / file, fresh / file)
    old = fixture.with_name(fixture.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if fixture.exists():
        fixture.rename(old)
    fresh.rename(fixture)
    shutil.rmtree(old, ignore_errors=True)
    return ours


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.claims.refresh_fixture", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("run", type=Path, help="a run's outputs folder (e.g. outputs)")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("analysis", nargs="?", help="the analysis whose slice to refresh")
    which.add_argument("--all", action="store_true", help="refresh every analysis's slice")
    args = parser.parse_args(argv)
    with exit_on_error():
        files = refresh(args.run, FIXTURE, None if args.all else args.analysis)
    which_slice = "every slice" if args.all else f"{args.analysis}'s slice"
    print(f"{FIXTURE.name}: {which_slice}, {len(files)} files from {args.run}")


if __name__ == "__main__":
    main()
