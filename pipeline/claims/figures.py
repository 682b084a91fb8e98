"""The claims at a glance: one forest plot of every claim's estimate and 95% interval against
its threshold, coloured by verdict and grouped by paper, drawn from the claims table.

Claims measure different things (a difference of accuracies, a share, a ratio), so each is
drawn as its distance from its own threshold, turned so that the claimed side is to the
right: in the statistic's own units where the threshold is 0, as a multiple of the threshold
otherwise ((value - t) / |t|). Every claim's threshold is then the line at 0, and a claim is
supported exactly when its whole interval lies right of it. The axis is linear within +-0.05
and logarithmic beyond, so a share far above its threshold does not squeeze the rest.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from pipeline.claims.rules import VERDICTS
from pipeline.core.io import Captioned

VERDICT_COLOURS = {"supported": "#4c9a4c", "contradicted": "#c94c4c", "inconclusive": "#8c8c8c",
                   "underpowered": "#d9a12b", "not testable": "#7b7bc4",
                   "seed-dependent": "#b05fb0", "reading-dependent": "#3f8fa8"}  # fmt: skip
LINEAR_WITHIN = 0.05  # the axis is linear within +-this distance, logarithmic beyond
PAPERS = (  # (claim prefix, heading), in the table's order
    ("kovaleva.", "Kovaleva et al. 2019"),
    ("clark.", "Clark et al. 2019"),
    ("michel.", "Michel et al. 2019"),
    ("voita.", "Voita et al. 2019"),
    ("extension.", "Extensions (this project's)"),
)


def scaled(table: pd.DataFrame) -> pd.DataFrame:
    """Each claim's estimate and interval as a distance from its threshold, claimed side
    positive (module docstring): columns claim, group, verdict, x, x_low, x_high."""
    sign = np.where(table["side"] == "below", -1.0, 1.0)  # [claims]
    threshold = table["threshold"].to_numpy(dtype=float)
    unit = np.where(threshold == 0, 1.0, np.abs(threshold))
    ends = [sign * (table[c].to_numpy(dtype=float) - threshold) / unit
            for c in ("estimate", "ci_low", "ci_high")]  # fmt: skip
    group = [next((h for p, h in PAPERS if c.startswith(p)), "other") for c in table["claim"]]
    return pd.DataFrame(
        {
            "claim": table["claim"],
            "group": group,
            "verdict": table["verdict"],
            "x": ends[0],
            "x_low": np.minimum(ends[1], ends[2]),
            "x_high": np.maximum(ends[1], ends[2]),
        }
    )


def forest_figure(table: pd.DataFrame, registry: str) -> Captioned:
    """The forest plot of the claims table (claims.csv's columns), `registry` naming the
    registry version it was judged by."""
    from pipeline.plotting.figures import plt  # the Agg backend; loaded only to draw

    points = scaled(table)
    order = [h for _, h in PAPERS] + ["other"]
    points = points.assign(rank=[order.index(g) for g in points["group"]])
    points = points.sort_values("rank", kind="stable")
    labels, ys, y = [], [], 0.0
    heading_ys = {}
    for group, rows in points.groupby("rank", sort=True):
        heading_ys[order[group]] = y
        y += 1
        for _ in range(len(rows)):
            ys.append(y)
            y += 1
        y += 0.5
    points = points.assign(y=ys)
    figure, ax = plt.subplots(figsize=(9, 1.2 + 0.19 * y))
    for row in points.itertuples():
        colour = VERDICT_COLOURS.get(row.verdict, "#000000")
        if math.isnan(row.x):
            ax.text(0.05, row.y, "no estimate", va="center", fontsize=6, color=colour)
        else:
            ax.plot([row.x_low, row.x_high], [row.y, row.y], color=colour, lw=1.6)
            ax.plot([row.x], [row.y], "o", color=colour, ms=3)
        labels.append((row.y, row.claim))
    for heading, at in heading_ys.items():
        ax.text(0.005, at, heading, transform=ax.get_yaxis_transform(), ha="left",
                va="center", fontsize=8, fontweight="bold")  # fmt: skip
    ax.axvline(0, color="#333333", lw=0.8)
    ax.set_xscale("symlog", linthresh=LINEAR_WITHIN, linscale=0.5)
    ticks = [-10, -1, -0.1, 0, 0.1, 1, 10]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks], fontsize=7)
    ax.set_yticks([at for at, _ in labels], [name for _, name in labels], fontsize=6)
    ax.set_ylim(y, -1)
    ax.set_xlabel("distance from the threshold, claimed side right (units: the statistic's "
                  "where the threshold is 0, else the threshold's)", fontsize=8)  # fmt: skip
    ax.grid(axis="x", color="#eeeeee")
    shown = [v for v in VERDICTS if v in set(points["verdict"])]
    ax.legend(
        handles=[plt.Line2D([], [], color=VERDICT_COLOURS[v], lw=2, label=v) for v in shown],
        loc="lower right",
        fontsize=7,
    )
    caption = (
        "Every claim's estimate and 95% interval as its distance from its own threshold "
        "(the line at 0), the claimed side to the right: in the statistic's units where the "
        "threshold is 0, as a multiple of the threshold otherwise; the axis is linear within "
        f"+-{LINEAR_WITHIN:g} and logarithmic beyond. Coloured by verdict, grouped by paper; "
        f"a claim is supported when its whole interval lies right of 0. Registry {registry}."
    )
    return Captioned(figure, caption, {"registry": registry})
