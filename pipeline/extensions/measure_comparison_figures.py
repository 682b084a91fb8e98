"""The measures figure: attention received by token type per layer, one panel per measure
(Kobayashi et al. 2020, Fig. 3 style), drawn from the table the measures stage writes."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # figures are files; no display is needed

import matplotlib.pyplot as plt
import pandas as pd

from pipeline.core.io import Captioned
from pipeline.extensions.measure_comparison import TOKEN_TYPES, MeasureComparison

MEASURE_TITLES = {
    "weights": "weights  alpha",
    "norms": "norms  ||alpha f(x)||",
    "rollout": "rollout  R_l",
}


def received_by_type(received: pd.DataFrame, title: str) -> plt.Figure:
    """`received` has measure, layer, token_type, received, ci_low, ci_high; per measure one
    panel: the share each token type receives per layer, with its interval as a band."""
    measures = list(dict.fromkeys(received["measure"]))
    figure, axes = plt.subplots(
        1, len(measures), figsize=(3.4 * len(measures), 3.2), sharey=True, squeeze=False
    )
    for ax, measure in zip(axes[0], measures, strict=True):
        for kind in TOKEN_TYPES:
            part = received[(received["measure"] == measure) & (received["token_type"] == kind)]
            ax.plot(part["layer"], part["received"], marker="o", label=kind)
            ax.fill_between(part["layer"], part["ci_low"], part["ci_high"], alpha=0.2)
        ax.set_title(MEASURE_TITLES.get(measure, measure), fontsize=9)
        ax.set_xlabel("layer")
        ax.set_xticks(sorted(received["layer"].unique()))
    axes[0][0].set_ylabel("share of attention received")
    axes[0][-1].legend(fontsize=7)
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    return figure


def measures_figures(result: MeasureComparison, task: str) -> dict[str, Captioned]:
    """The comparison figure of one task, by file stem."""
    examples = result.metrics["examples"]
    figure = received_by_type(result.received, f"Attention received by token type ({task})")
    caption = (
        f"Share of each query's attention that [CLS], [SEP], punctuation and other tokens "
        f"receive, per layer, averaged over heads, queries and {examples} {task} dev examples "
        "(seeded sample, stratified by label) of the fine-tuned model, under raw weights, "
        "value-weighted norms ||alpha f(x)|| (Kobayashi et al. 2020) and attention rollout "
        "(Abnar and Zuidema 2020); bands: 95% bootstrap intervals over examples."
    )
    return {"received_by_type": Captioned(figure, caption, {"task": task, "examples": examples})}
