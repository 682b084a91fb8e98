"""The claims stage's files, from the stages' outputs: the table with the registry version
and digest it was judged by, the per-seed table, the headline, the Markdown table, the
forest plot and the flat metrics."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from pipeline.claims.evaluate import all_claims, evaluate, flat_metrics, summary
from pipeline.claims.figures import forest_figure
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.registry import Registration, registration, registry_digest
from pipeline.claims.table_markdown import results_markdown
from pipeline.core.io import Captioned, write_results

FOREST = "forest"  # the figure's file stem


def registry_sentence(registered: Registration) -> str:
    """The headline's sentence on the registry the verdicts were judged by."""
    why = (
        "the rules were frozen before this model ran"
        if registered.mark == "registered"
        else "this model's results were seen before the rules were fixed, or the registry "
        "is not frozen"
    )
    return (
        f" Judged by claims registry version {registered.version} ({registered.status}, "
        f"digest {registered.digest[:12]}): every verdict here is {registered.mark} ({why})."
    )


def stamped(table: pd.DataFrame, registered: Registration) -> pd.DataFrame:
    """The claims table with the registry's version and digest and the verdicts' mark."""
    return table.assign(
        registry_version=registered.version,
        registry_status=registered.status,
        registry_digest=registered.digest,
        registration=registered.mark,
    )


class ClaimsFiles(NamedTuple):
    """A judged claims table's files by name: tables and texts (beside each other), the
    forest plot, and the flat metrics."""

    tables: dict[str, pd.DataFrame]
    texts: dict[str, str]
    figures: dict[str, Captioned]
    metrics: dict[str, Any]


def claims_files(
    table: pd.DataFrame, by_seed: pd.DataFrame, registered: Registration
) -> ClaimsFiles:
    """Every file of a judged claims table (the stage's, or a reference folder's)."""
    table = stamped(table, registered)
    label = f"version {registered.version} ({registered.status}, {registered.digest[:12]})"
    return ClaimsFiles(
        tables={"claims": table, "claims_by_seed": by_seed},
        texts={
            "summary.txt": summary(table) + registry_sentence(registered),
            "results.md": results_markdown(table),
        },
        figures={FOREST: forest_figure(table, label)},
        metrics=flat_metrics(table) | registered.metrics(),
    )


def judge_claims(
    out: StageOutputs, tasks: Sequence[str], seeds: Sequence[int], model: str
) -> ClaimsFiles:
    """Judge every claim of `tasks` on `seeds` by the registry, as the claims stage does."""
    table, by_seed = evaluate(all_claims(out, tasks), out, seeds)
    return claims_files(table, by_seed, registration(registry_digest(), model))


def write_into(files: ClaimsFiles, folder: Path) -> None:
    """Every file into one folder (a kept reference run's), the metrics as claims.json."""
    write_results(
        folder,
        folder,
        folder / "claims.json",
        tables=files.tables,
        figures=files.figures,
        metrics=files.metrics,
        texts=files.texts,
    )
