"""The claims stage's files, from the stages' outputs: the table with the registry version
and digest it was judged by, the per-seed table, the headline, the Markdown table, the
forest plot and the flat metrics."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from pipeline.claims.figures import forest_figure
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.prose import results_markdown
from pipeline.claims.registry import Registration, registration, registry_digest
from pipeline.claims.table import all_claims, evaluate, flat_metrics, summary
from pipeline.core.io import save_figure, write_json, write_table, write_text

FOREST = "forest.png"


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


def write_table_files(
    table: pd.DataFrame,
    by_seed: pd.DataFrame,
    registered: Registration,
    tables: Path,
    figures: Path | None,
    metrics: Path,
) -> None:
    """Every file of a judged claims table (the stage's, or a reference folder's)."""
    table = stamped(table, registered)
    write_table(tables / "claims.csv", table)
    write_table(tables / "claims_by_seed.csv", by_seed)
    write_text(tables / "summary.txt", summary(table) + registry_sentence(registered))
    write_text(tables / "results.md", results_markdown(table))
    write_json(metrics, flat_metrics(table) | registered.metrics())
    if figures is not None:
        label = f"version {registered.version} ({registered.status}, {registered.digest[:12]})"
        drawn = forest_figure(table, label)
        save_figure(figures / FOREST, drawn.figure, drawn.caption, drawn.config)


def write_claims(
    out: StageOutputs,
    tasks: Sequence[str],
    seeds: Sequence[int],
    model: str,
    *,
    tables: Path,
    figures: Path,
    metrics: Path,
) -> pd.DataFrame:
    """Judge every claim of `tasks` on `seeds` and write the stage's files."""
    table, by_seed = evaluate(all_claims(out, tasks), out, seeds)
    registered = registration(registry_digest(out), model)
    write_table_files(table, by_seed, registered, tables, figures, metrics)
    return table
