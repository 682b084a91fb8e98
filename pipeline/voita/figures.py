"""The gates figure: task metric against heads kept for Voita et al.'s hard-concrete gates and
Michel et al.'s gradient pruning, on one pair of axes, drawn from the gates stage's tables."""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")  # figures are files; no display is needed

import matplotlib.pyplot as plt
import pandas as pd

from pipeline.core.io import Captioned

if TYPE_CHECKING:
    from pipeline.voita.gates import GatesResult

LABELS = {"gates": "hard-concrete gates (Voita)", "gradient": "gradient pruning (Michel)"}


def gates_vs_pruning(curves: pd.DataFrame, overlap: pd.DataFrame, metric: str, title: str):
    """`curves` has method, heads_kept, metric, ci_low, ci_high; `overlap` has heads_kept and
    jaccard, written beside each gate point."""
    figure, ax = plt.subplots(figsize=(5.0, 3.4))
    for method, part in curves.groupby("method", sort=False):
        part = part.sort_values("heads_kept")
        ax.plot(part["heads_kept"], part["metric"], marker="o", label=LABELS.get(method, method))
        if part["ci_low"].notna().all():
            ax.fill_between(part["heads_kept"], part["ci_low"], part["ci_high"], alpha=0.2)
    gates = curves[curves["method"] == "gates"].reset_index(drop=True)
    for row, shared in zip(gates.itertuples(), overlap.itertuples(), strict=True):
        ax.annotate(
            f"J={shared.jaccard:.2f}", (row.heads_kept, row.metric), fontsize=7,
            textcoords="offset points", xytext=(3, 5),
        )  # fmt: skip
    ax.set_xlabel("heads kept")
    ax.set_ylabel(metric)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    figure.tight_layout()
    return figure


def gates_figures(result: GatesResult, task: str) -> dict[str, Captioned]:
    """The comparison figure of one task, by file stem."""
    metric = result.metrics["main_metric"]
    examples, trained = result.metrics["num_examples"], result.metrics["train_examples"]
    figure = gates_vs_pruning(
        result.curves, result.overlap, metric, f"Gates vs gradient pruning ({task})"
    )
    caption = (
        f"{metric} on {examples} {task} dev examples (seeded sample, stratified by label) against "
        "the number of heads kept: hard-concrete gates with an l0 penalty (Voita et al. 2019; "
        f"one point per lambda, fitted on {trained} train examples, heads with test-time gate "
        "> 0.5 kept, the others zeroed) and Michel et al.'s iterative gradient pruning; bands: "
        "95% bootstrap intervals; J: Jaccard overlap of the heads the gates keep with the same "
        "number of heads of highest gradient importance."
    )
    config = {"task": task, "examples": examples, "train_examples": trained}
    return {"gates_vs_pruning": Captioned(figure, caption, config)}
