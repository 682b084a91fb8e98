"""Figs. 1 and 2 of Kovaleva et al. (2019), each drawn from a table the stage also writes.

Fig. 1 draws labelled maps of the label folder's map set; Fig. 2 the shares with intervals.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # figures are files; no display is needed

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from pipeline.core.io import Captioned
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.mapsets import LabelledMap

VARIANT_ORDER = ("pretrained", "finetuned")
PALETTE = dict(zip(CLASSES, sns.color_palette("colorblind", len(CLASSES)), strict=True))
SHARES_CAPTION = (
    "Share of each attention-pattern type (CNN trained on maps labelled by eye) among all "
    "heads' maps on dev examples, per task, for the pre-trained and the fine-tuned model "
    "(paper Fig. 2). Whiskers: 95% bootstrap intervals over examples."
)
ESTIMATED_CAPTION = (
    "Share of each attention-pattern type among all heads' maps on dev examples, per task, "
    "for the pre-trained and the fine-tuned model (paper Fig. 2), estimated from the share "
    "round: the frozen stratifier's calls on the run's maps, corrected by maps drawn at "
    "random within each call and labelled by eye (the shares the claims judge). Whiskers: "
    "95% bootstrap intervals over dev examples and labelled maps."
)
EXAMPLES_CAPTION = (
    "A typical map of each type: maps labelled by eye that the cross-validated classifier "
    "also puts in that type, the most confident one (paper Fig. 1). Rows: queries; columns: "
    "keys. A type missing here has no such map."
)


def pattern_shares_figure(shares: pd.DataFrame, estimated: pd.DataFrame) -> Captioned:
    """Fig. 2 with its caption: per task, one bar per type with its interval, one panel per
    model variant; the shares estimated from the share round where there are any
    (`estimated`: apply.ClassifiedMaps.estimated), else the classifier's (`shares`: columns
    task, variant, class, share, ci_low, ci_high, see apply.class_shares)."""
    caption = SHARES_CAPTION
    if len(estimated):
        shares = estimated[estimated["type"].isin(CLASSES)].rename(columns={"type": "class"})
        caption = ESTIMATED_CAPTION
    present = set(shares["variant"])
    variants = [v for v in VARIANT_ORDER if v in present] + sorted(present - set(VARIANT_ORDER))
    tasks = list(dict.fromkeys(shares["task"]))
    width = 0.8 / len(CLASSES)
    fig, axes = plt.subplots(
        1, len(variants), figsize=(1.5 + 1.6 * len(tasks) * len(variants), 3.8), sharey=True
    )
    axes = [axes] if len(variants) == 1 else list(axes)
    for ax, variant in zip(axes, variants, strict=True):
        part = shares[shares["variant"] == variant].set_index(["task", "class"])
        for k, name in enumerate(CLASSES):
            rows = part.reindex([(t, name) for t in tasks])
            x = [i + (k - (len(CLASSES) - 1) / 2) * width for i in range(len(tasks))]
            errors = [rows["share"] - rows["ci_low"], rows["ci_high"] - rows["share"]]
            ax.bar(
                x,
                rows["share"],
                width,
                yerr=errors,
                color=PALETTE[name],
                label=name,
                error_kw={"elinewidth": 0.8, "capsize": 1.5},
            )
        ax.set_xticks(range(len(tasks)), tasks)
        ax.set_title(variant)
        ax.set_ylim(0, 1)
        ax.set_xlabel("task")
    axes[0].set_ylabel("share of maps")
    axes[-1].legend(loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    fig.tight_layout()
    return Captioned(fig, caption, {})


def pattern_examples_figure(picks: pd.DataFrame, maps: Mapping[str, LabelledMap]) -> Captioned:
    """Fig. 1 with its caption: one map per type with its word pieces. `picks`: map_id,
    visual, task, variant (see examples.pick_examples); `maps`: the label folder's map set."""
    fig, axes = plt.subplots(1, max(len(picks), 1), figsize=(4.2 * max(len(picks), 1), 4.6))
    axes = np.atleast_1d(axes)
    for ax, pick in zip(axes, picks.itertuples(index=False), strict=False):
        entry = maps[pick.map_id]
        n = len(entry.tokens)
        ax.imshow(entry.weights, cmap="Blues", vmin=0)
        size = max(3.5, 8 - n / 8)
        ax.set_xticks(range(n), entry.tokens, rotation=90, fontsize=size)
        ax.set_yticks(range(n), entry.tokens, fontsize=size)
        ax.tick_params(length=0)
        ax.set_title(f"{pick.visual}\n{pick.task}, {pick.variant} ({pick.map_id})", fontsize=9)
    fig.tight_layout()
    return Captioned(fig, EXAMPLES_CAPTION, {})
