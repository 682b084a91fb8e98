"""The ablation figures, each drawn from the table the ablate stage writes beside it (layers
and heads numbered from 1, as written).

- `head_delta_heatmap` (paper Fig. 8): layers x heads, the change in the task metric when
  that one head is disabled, annotated, on a diverging scale centred at 0; a `*` marks the
  heads whose change is significant (Benjamini-Hochberg q < 0.05).
- `layer_delta_bars` (paper Fig. 9): the change when a whole layer is disabled, with its
  95% paired bootstrap interval as an error bar.
- `pruning_curve_plot` (Michel et al. Fig. 3 style): metric against fraction of heads pruned,
  with a band for the 95% bootstrap interval of each point.

`ablation_figures` draws all three from `ablate_task`'s result, with their captions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")  # figures are files; no display is needed

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from pipeline.core.io import Captioned

if TYPE_CHECKING:
    from pipeline.ablation.ablate import Ablated
    from pipeline.analyses.ablate.settings import AblateConfig

POINTS = 100.0  # deltas are drawn in points (x100) of the metric
ALPHA = 0.05  # q-values below it are marked significant


def head_delta_heatmap(heads: pd.DataFrame, metric: str, title: str) -> plt.Figure:
    """`heads` has layer, head, delta, q_value; cells show delta x 100, with `*` where the
    change is significant (q < ALPHA)."""
    grid = heads.pivot_table(index="layer", columns="head", values="delta")
    grid = grid * POINTS
    marks = heads.pivot_table(index="layer", columns="head", values="q_value") < ALPHA
    labels = grid.map(lambda value: f"{value:.1f}") + marks.map(lambda sig: "*" if sig else "")
    limit = max(float(grid.abs().max().max()), 1e-9)
    width = max(4.0, 0.55 * grid.shape[1] + 1.5)
    figure, ax = plt.subplots(figsize=(width, 0.5 * grid.shape[0] + 1.4))
    sns.heatmap(
        grid,
        ax=ax,
        cmap="RdBu",
        center=0.0,
        vmin=-limit,
        vmax=limit,
        annot=labels,
        fmt="",
        annot_kws={"fontsize": 7},
        cbar_kws={"label": f"change in {metric} (x100)"},
    )
    ax.set_title(title, fontsize=10)
    figure.tight_layout()
    return figure


def layer_delta_bars(layers: pd.DataFrame, metric: str, title: str) -> plt.Figure:
    """`layers` has layer, delta, ci_low, ci_high, q_value; one bar per disabled layer,
    delta x 100, with its interval as an error bar and `*` where q < ALPHA."""
    data = layers.assign(change=layers["delta"] * POINTS)
    figure, ax = plt.subplots(figsize=(max(4.0, 0.5 * len(data) + 2), 3.2))
    sns.barplot(data=data, x="layer", y="change", ax=ax, color="tab:blue", native_scale=True)
    below = (data["delta"] - data["ci_low"]) * POINTS
    above = (data["ci_high"] - data["delta"]) * POINTS
    ax.errorbar(
        data["layer"], data["change"], yerr=[below, above], fmt="none", ecolor="black", capsize=3
    )
    ax.axhline(0.0, color="black", linewidth=0.8)
    for row in data.itertuples():
        top = row.ci_high * POINTS if row.change >= 0 else row.ci_low * POINTS
        ax.annotate(
            f"{row.change:.1f}" + ("*" if row.q_value < ALPHA else ""),
            (row.layer, top),
            ha="center",
            va="bottom" if row.change >= 0 else "top",
            fontsize=7,
        )
    ax.set_xlabel("disabled layer")
    ax.set_ylabel(f"change in {metric} (x100)")
    ax.set_title(title, fontsize=10)
    figure.tight_layout()
    return figure


def pruning_curve_plot(curve: pd.DataFrame, metric: str, title: str) -> plt.Figure:
    """`curve` has fraction_pruned, the metric column and its interval ci_low, ci_high."""
    figure, ax = plt.subplots(figsize=(4.5, 3.2))
    sns.lineplot(data=curve, x="fraction_pruned", y=metric, marker="o", ax=ax)
    ax.fill_between(curve["fraction_pruned"], curve["ci_low"], curve["ci_high"], alpha=0.25)
    ax.axhline(curve[metric].iloc[0], color="grey", linestyle="--", linewidth=0.8)
    ax.set_xlabel("fraction of heads pruned")
    ax.set_ylabel(metric)
    ax.set_title(title, fontsize=10)
    figure.tight_layout()
    return figure


def ablation_figures(result: Ablated, task: str, settings: AblateConfig) -> dict[str, Captioned]:
    """Figs. 8 and 9 and the pruning curve of one task, by file stem."""
    metric, examples = result.metrics["main_metric"], result.metrics["num_examples"]
    config = {"task": task, "mode": settings.mode, "examples": examples}
    where = f"{task}, {examples} dev examples, {settings.mode} mode"
    baseline = result.heads["baseline"].iloc[0]
    scored = (
        "the same examples"
        if settings.importance_split == "eval"
        else f"{result.metrics['importance_examples']} train examples"
    )
    return {
        "fig8_heads": Captioned(
            head_delta_heatmap(result.heads, metric, f"Disabling one head ({where})"),
            f"Change in {metric} (x100; baseline {baseline:.3f}) when each single head is "
            f"disabled ({settings.mode} mode), on {examples} {task} dev examples (a seeded "
            "sample, stratified by label); positive cells: the model does better without that "
            f"head; *: significant change (paired permutation test, Benjamini-Hochberg q < "
            f"{ALPHA} over all heads; paper Fig. 8).",
            config,
        ),
        "fig9_layers": Captioned(
            layer_delta_bars(result.layers, metric, f"Disabling one layer ({where})"),
            f"Change in {metric} (x100) when all heads of one layer are disabled "
            f"({settings.mode} mode), on {examples} {task} dev examples; error bars: 95% "
            f"paired bootstrap intervals; *: q < {ALPHA} over the layers (paper Fig. 9).",
            config,
        ),
        "pruning": Captioned(
            pruning_curve_plot(result.pruning, metric, f"Iterative head pruning ({task})"),
            f"{metric} on {examples} {task} dev examples as heads are pruned "
            f"({settings.prune_step:.0%} of all heads per step, least important first by "
            f"gradient importance on {scored}, recomputed after each step; band: 95% bootstrap "
            "interval over the examples; Michel et al. 2019).",
            {**config, "prune_step": settings.prune_step},
        ),
    }
