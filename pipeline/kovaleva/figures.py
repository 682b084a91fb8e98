"""The Kovaleva et al. figures with their captions, each drawn from a table the stage writes.

`analysis_figures` (Figs. 5, 6, 7, 10), `framenet_figures` (Figs. 3-4) and `table1_figures`
(Table 1) return {file stem: Captioned}; the tables come in as written, layers and heads
numbered from 1.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # figures are files; no display is needed

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from pipeline.kovaleva.analysis import TaskAnalysis
from pipeline.kovaleva.framenet import FilterRule
from pipeline.kovaleva.framenet_heads import FrameNetHeads
from pipeline.kovaleva.table1 import REGIMES
from pipeline.kovaleva.tables import VARIANTS
from pipeline.report.figures import Captioned, attention_grid, head_heatmaps, map_panels


def analysis_figures(result: TaskAnalysis, config: dict) -> dict[str, Captioned]:
    """Figs. 5, 6 (one per variant), 7 and 10 of one task; `config`: the run's settings."""
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
            config,
        )
    }
    for variant in VARIANTS:
        part = result.token_types[result.token_types["variant"] == variant]
        figures[f"fig6_token_types_{variant}"] = Captioned(
            head_heatmaps(part, "score", facet="type", title=f"{task} ({variant})"),
            f"Fig. 6 ({task}, {variant} model): per head, the attention a token type receives "
            "(mean over query positions, max over the type's tokens in the example), averaged "
            "over the examples that hold the type; examples without it are left out.",
            config,
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
        config,
    )
    example, variant = result.grid_example, result.grid_variant
    text = " ".join(result.grid_tokens)
    figures["fig10_grid"] = Captioned(
        attention_grid(result.grid, title=f"{task} ({variant}), example {example}: {text}"),
        f"Fig. 10 ({task}): every head's attention map (rows: layers, columns: heads) of dev "
        f"example {example} ({len(result.grid_tokens)} pieces) in the {variant} model.",
        {**config, "example_id": example, "variant": variant},
    )
    return figures


def framenet_figures(result: FrameNetHeads, rule: FilterRule, config: dict) -> dict[str, Captioned]:
    """Figs. 3 and 4 of the FrameNet heads; `rule`: the filter the sentences passed."""
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
            config,
        ),
        "fig4_top_heads": Captioned(
            map_panels(result.top_head_maps, result.top_heads),
            f"Fig. 4: the {len(result.top_heads)} heads with the highest FrameNet score, each "
            "on the sentence where it scores highest (rows: query pieces, columns: key pieces).",
            config,
        ),
    }


def table1_figure(table: pd.DataFrame) -> plt.Figure:
    """Grouped bars: per task, the main-metric dev score of each regime."""
    long = table.melt(id_vars=["task", "metric"], value_vars=list(REGIMES), var_name="regime")
    long["regime"] = long["regime"].map(REGIMES)
    long["task"] = long["task"] + " (" + long["metric"] + ")"
    figure, ax = plt.subplots(figsize=(1.8 * len(table) + 2.5, 3.5))
    sns.barplot(long, x="task", y="value", hue="regime", ax=ax)
    ax.set_xlabel("")
    ax.set_ylabel("dev score")
    ax.axhline(0.0, color="black", linewidth=0.6)
    ax.legend(fontsize=7, loc="lower left", bbox_to_anchor=(1.0, 0.0))
    figure.tight_layout()
    return figure


def table1_figures(table: pd.DataFrame, config: dict) -> dict[str, Captioned]:
    """Table 1 as grouped bars."""
    return {
        "table1": Captioned(
            table1_figure(table),
            "Table 1: dev score of each task's main metric for the pre-trained model without "
            "fine-tuning (a randomly initialised classifier head), a randomly initialised model "
            "fine-tuned, and the pre-trained model fine-tuned.",
            config,
        )
    }
