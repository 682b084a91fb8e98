"""The Kovaleva et al. figures with their captions, each drawn from a table the stage writes.

`analysis_figures` (Figs. 5, 6, 7, 10), `framenet_figures` (Figs. 3-4) and `table1_figures`
(Table 1) return {file stem: Captioned}; the tables come in as written, layers and heads
numbered from 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")  # figures are files; no display is needed

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from pipeline.core.io import Captioned
from pipeline.kovaleva.tables import VARIANTS
from pipeline.plotting.figures import (
    attention_grid,
    finish_grid,
    head_heatmaps,
    map_panels,
    panel_grid,
)

if TYPE_CHECKING:
    from pipeline.analyses.framenet.settings import FramenetConfig
    from pipeline.kovaleva.analyze import TaskAnalysis
    from pipeline.kovaleva.framenet import FrameNetHeads


def whiskers(table: pd.DataFrame, value: str) -> np.ndarray:
    """Error bar lengths [2, rows] (below, above) of `value` from its `_ci_low`/`_ci_high`."""
    return np.stack(
        [table[value] - table[f"{value}_ci_low"], table[f"{value}_ci_high"] - table[value]]
    )


def layer_profiles(
    table: pd.DataFrame,
    value: str,
    hue: str | None = None,
    facet: str | None = None,
    ncols: int = 3,
    title: str | None = None,
) -> plt.Figure:
    """Per `facet` value one panel of `value` against `layer`, one line per `hue` value, each
    point with whiskers to its 95% interval (`<value>_ci_low`, `<value>_ci_high`)."""
    panels = [None] if facet is None else list(table[facet].drop_duplicates())
    figure, axes = panel_grid(len(panels), ncols, (3.6, 2.8), sharex=True)
    for ax, name in zip(axes.flat, panels, strict=False):
        part = table if name is None else table[table[facet] == name]
        lines = [(None, part)] if hue is None else list(part.groupby(hue, sort=False))
        for offset, (label, line) in enumerate(lines):
            shift = 0.08 * (offset - (len(lines) - 1) / 2)  # whiskers side by side
            ax.errorbar(
                line["layer"] + shift,
                line[value],
                yerr=whiskers(line, value),
                marker="o",
                markersize=3,
                capsize=2,
                label=label,
            )
        ax.set_xticks(sorted(part["layer"].unique()))
        ax.set_xlabel("layer")
        ax.set_ylabel(value)
        if name is not None:
            ax.set_title(str(name))
        if hue is not None and ax is axes.flat[0]:
            ax.legend(fontsize=7)  # one legend: every panel has the same lines
    return finish_grid(figure, axes, len(panels), title)


def analysis_figures(result: TaskAnalysis) -> dict[str, Captioned]:
    """Figs. 5, 6 (one per variant), 7 and 10 of one task."""
    task, examples = result.task, len(result.examples)
    figures = {
        "fig5_cosine": Captioned(
            head_heatmaps(
                result.cosine,
                "cosine",
                annotate=True,
                title=f"{task}: cosine(pre-trained, fine-tuned)",
            ),
            f"Fig. 5 ({task}): per-head cosine similarity between the pre-trained and the "
            "fine-tuned attention map of the same dev example (flattened real-length maps), "
            f"averaged over {examples} examples. Low values: heads that fine-tuning changed most.",
            {},
        ),
        "fig5_cosine_layers": Captioned(
            layer_profiles(
                result.cosine_layers, "cosine", title=f"{task}: cosine per layer (95% CI)"
            ),
            f"Fig. 5 per layer ({task}): the cosine similarity of pre-trained and fine-tuned "
            "maps averaged over the layer's heads and over "
            f"{examples} examples, with 95% percentile bootstrap intervals over examples.",
            {},
        ),
        "fig6_token_type_layers": Captioned(
            layer_profiles(
                result.token_type_layers,
                "score",
                hue="variant",
                facet="type",
                ncols=5,
                title=f"{task}: attention received per layer (95% CI)",
            ),
            f"Fig. 6 per layer ({task}): the attention a token type receives (as Fig. 6), "
            "averaged over the layer's heads and over the examples that hold the type, "
            "pre-trained vs fine-tuned, with 95% percentile bootstrap intervals over examples.",
            {},
        ),
    }
    for variant in VARIANTS:
        part = result.token_types[result.token_types["variant"] == variant]
        figures[f"fig6_token_types_{variant}"] = Captioned(
            head_heatmaps(part, "score", facet="type", title=f"{task} ({variant})"),
            f"Fig. 6 ({task}, {variant} model): per head, the attention a token type receives "
            "(mean over query positions, max over the type's tokens in the example), averaged "
            "over the examples that hold the type; examples without it are left out.",
            {},
        )
    figures["fig7_cls_last_layer"] = Captioned(
        head_heatmaps(
            result.cls_last_layer,
            "score",
            facet="variant",
            facets=list(VARIANTS),
            rows="type",
            cols="head",
            ncols=2,
            annotate=True,
            title=f"{task}: last layer's [CLS] attention to token types",
        ),
        f"Fig. 7 ({task}): attention from [CLS] in the last layer to each token type (max over "
        "the type's tokens), per head, averaged over the examples that hold the type.",
        {},
    )
    example, variant = result.grid_example, result.grid_variant
    text = " ".join(result.grid_tokens)
    figures["fig10_grid"] = Captioned(
        attention_grid(result.grid, title=f"{task} ({variant}), example {example}: {text}"),
        f"Fig. 10 ({task}): every head's attention map (rows: layers, columns: heads) of dev "
        f"example {example} ({len(result.grid_tokens)} pieces) in the {variant} model.",
        {"example_id": example, "variant": variant},
    )
    return figures


def top_heads_figure(top: pd.DataFrame, ratio: str) -> plt.Figure:
    """Horizontal bars of the top heads' scores with whiskers to their 95% intervals."""
    figure, ax = plt.subplots(figsize=(4.5, 0.4 * len(top) + 1.2))
    names = [f"L{layer}-H{head}" for layer, head in zip(top["layer"], top["head"], strict=True)]
    ax.barh(names, top["score"], xerr=whiskers(top, "score"), capsize=3, color="tab:blue")
    ax.invert_yaxis()  # rank 1 on top
    ax.set_xlabel("mean max attention core FE -> LU")
    ax.set_title(f"FrameNet top heads; top1 / median head: {ratio}", fontsize=9)
    figure.tight_layout()
    return figure


def framenet_figures(result: FrameNetHeads, rule: FramenetConfig) -> dict[str, Captioned]:
    """Figs. 3 and 4 of the FrameNet heads; `rule`: the filter the sentences passed."""
    metrics = result.metrics
    ratio = (
        f"{metrics['top1_over_median']:.2f} [{metrics['top1_over_median_ci_low']:.2f}, "
        f"{metrics['top1_over_median_ci_high']:.2f}]"
    )
    return {
        "fig3_heads": Captioned(
            head_heatmaps(
                result.heads,
                "score",
                annotate=True,
                title="FrameNet: max attention core FE -> LU",
            ),
            "Fig. 3: per head of the pre-trained model, the maximum attention from core "
            f"frame-element pieces to lexical-unit pieces, averaged over {result.sentences} "
            f"FrameNet 1.5 sentences (<= {rule.max_tokens} tokens, one target, core FEs of "
            f"<= {rule.max_fe_tokens} tokens, none within {rule.target_window} tokens of the "
            "target).",
            {},
        ),
        "fig3_top_heads": Captioned(
            top_heads_figure(result.top_heads, ratio),
            f"Fig. 3, top heads: the {len(result.top_heads)} best heads' FrameNet scores (as "
            f"Fig. 3) with 95% percentile bootstrap intervals over the {result.sentences} "
            "sentences; the title gives the best head's score over the median head's with its "
            "interval, the best head re-chosen in every resample.",
            {},
        ),
        "fig4_top_heads": Captioned(
            map_panels(result.top_head_maps, result.top_heads),
            f"Fig. 4: the {len(result.top_heads)} heads with the highest FrameNet score, each "
            "on the sentence where it scores highest (rows: query pieces, columns: key pieces).",
            {},
        ),
    }


def grouped_bars(ax: plt.Axes, table: pd.DataFrame, columns: Mapping[str, str]) -> None:
    """Per row of `table` (a task), one bar per column with whiskers to its 95% interval;
    `columns`: {column: legend label}."""
    width = 0.8 / len(columns)
    for k, (column, label) in enumerate(columns.items()):
        x = np.arange(len(table)) + (k - (len(columns) - 1) / 2) * width
        ax.bar(x, table[column], width, yerr=whiskers(table, column), capsize=2, label=label)
    ax.set_xticks(np.arange(len(table)), table["task"] + " (" + table["metric"] + ")")
    ax.axhline(0.0, color="black", linewidth=0.6)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def table1_figure(
    table: pd.DataFrame, regimes: Mapping[str, str], differences: Sequence[str]
) -> plt.Figure:
    """Per task, the main-metric dev score of each regime (left; `regimes`: {column: legend
    label}) and the paired `differences` (right), with whiskers to their 95% intervals."""
    figure, (scores, gaps) = plt.subplots(
        1, 2, figsize=(2.4 * len(table) + 5.0, 3.5), layout="constrained"
    )
    grouped_bars(scores, table, regimes)
    scores.set_ylabel("dev score")
    grouped_bars(gaps, table, {name: name.replace("_", " ") for name in differences})
    gaps.set_ylabel("paired difference")
    return figure


def table1_figures(
    table: pd.DataFrame, regimes: Mapping[str, str], differences: Sequence[str]
) -> dict[str, Captioned]:
    """Table 1 as grouped bars with 95% intervals (the columns named in `table1_figure`)."""
    return {
        "table1": Captioned(
            table1_figure(table, regimes, differences),
            "Table 1: dev score of each task's main metric (left) for the pre-trained model "
            "without fine-tuning (a randomly initialised classifier head), a randomly "
            "initialised model fine-tuned, the pre-trained model fine-tuned, and the best "
            "constant prediction (the majority class; correlation 0 for a regression task); "
            "right: the paired differences on the same dev rows. Whiskers: 95% percentile "
            "bootstrap intervals over dev rows.",
            {},
        )
    }
