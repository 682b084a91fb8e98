"""What the report shows first: the papers' findings counted by verdict, as one sentence and
as a small chart (one stacked bar per paper, and one for the project's extensions) whose
legend and axis fit the first screen. Drawn as inline SVG from the claims table
(`outputs/plots/claims/claims.csv`), in the forest plot's colours and groups
(pipeline/claims/figures.py); the forest plot itself, one row per claim, follows in the
claims section."""

from __future__ import annotations

import html
import math

import pandas as pd

from pipeline.claims.figures import PAPERS, VERDICT_COLOURS
from pipeline.claims.readings import READING
from pipeline.claims.rules import VERDICTS

LABEL_WIDTH = 210  # px of the group names left of the bars
BAR_WIDTH = 560  # px the largest group's bar spans
ROW_HEIGHT = 26  # px per group
LEGEND_HEIGHT = 28  # px above the bars
AXIS_HEIGHT = 34  # px below the bars: ticks and the axis title
TICK_STEP = 5  # claims between two ticks


def verdict_counts(claims: pd.DataFrame) -> pd.DataFrame:
    """Claims counted per group (a paper, or the extensions) and verdict: one row per group
    in the forest plot's order, one column per verdict in VERDICTS' order. A finding read
    two ways counts once (its readings' rows, kind `reading`, are left out)."""
    claims = claims[claims["kind"] != READING]
    group = [next((h for p, h in PAPERS if c.startswith(p)), "other") for c in claims["claim"]]
    counts = pd.crosstab(pd.Series(group, name="group"), claims["verdict"].to_numpy())
    order = [h for _, h in PAPERS if h in counts.index] + (
        ["other"] if "other" in counts.index else []
    )
    return counts.reindex(index=order, columns=list(VERDICTS), fill_value=0)


def headline(claims: pd.DataFrame) -> str:
    """`45 findings of the papers tested on this run: 26 supported, ...`, the verdicts in
    VERDICTS' order, with the extensions counted apart."""
    papers = claims[claims["kind"] == "paper"]
    counts = papers["verdict"].value_counts()
    parts = ", ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS)
    text = f"{len(papers)} findings of the papers tested on this run: {parts}."
    extensions = int((claims["kind"] == "extension").sum())
    if extensions:
        text += f" {extensions} further claims test this project's extensions."
    return text


def _ticks(largest: int) -> list[int]:
    return list(range(0, TICK_STEP * math.ceil(max(largest, 1) / TICK_STEP) + 1, TICK_STEP))


def verdict_chart(claims: pd.DataFrame) -> str:
    """The SVG of the claims counted by group and verdict (`verdict_counts`): legend on
    top, one bar per group, the axis (claims) below."""
    counts = verdict_counts(claims)
    ticks = _ticks(int(counts.sum(axis=1).max()))
    scale = BAR_WIDTH / ticks[-1]  # px per claim
    top = LEGEND_HEIGHT
    height = top + ROW_HEIGHT * len(counts) + AXIS_HEIGHT
    width = LABEL_WIDTH + BAR_WIDTH + 50
    shown = [v for v in VERDICTS if counts[v].sum()]
    parts = [
        f'<svg class="verdicts" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">'
        "<title>Claims counted by paper and verdict</title>"
    ]
    x = LABEL_WIDTH
    for verdict in shown:  # the legend
        parts.append(
            f'<rect x="{x}" y="6" width="12" height="12" fill="{VERDICT_COLOURS[verdict]}"/>'
            f'<text x="{x + 16}" y="16">{verdict}</text>'
        )
        x += 16 + 7 * len(verdict) + 18
    for row, (group, verdicts) in enumerate(counts.iterrows()):
        y = top + row * ROW_HEIGHT
        parts.append(
            f'<text x="{LABEL_WIDTH - 8}" y="{y + 17}" text-anchor="end">'
            f"{html.escape(str(group))}</text>"
        )
        x = LABEL_WIDTH
        for verdict in shown:
            n = int(verdicts[verdict])
            if not n:
                continue
            parts.append(
                f'<rect x="{x:.1f}" y="{y + 4}" width="{n * scale:.1f}" height="{ROW_HEIGHT - 8}" '
                f'fill="{VERDICT_COLOURS[verdict]}"><title>{html.escape(str(group))}: {n} '
                f"{verdict}</title></rect>"
            )
            if n * scale >= 14:
                parts.append(
                    f'<text x="{x + n * scale / 2:.1f}" y="{y + 17}" text-anchor="middle" '
                    f'fill="#fff">{n}</text>'
                )
            x += n * scale
        parts.append(f'<text x="{x + 6:.1f}" y="{y + 17}">{int(verdicts.sum())}</text>')
    axis = top + ROW_HEIGHT * len(counts)
    parts.append(
        f'<line x1="{LABEL_WIDTH}" y1="{axis}" x2="{LABEL_WIDTH + BAR_WIDTH}" y2="{axis}" '
        'stroke="#333"/>'
    )
    for tick in ticks:
        at = LABEL_WIDTH + tick * scale
        parts.append(
            f'<line x1="{at:.1f}" y1="{axis}" x2="{at:.1f}" y2="{axis + 4}" stroke="#333"/>'
            f'<text x="{at:.1f}" y="{axis + 15}" text-anchor="middle">{tick}</text>'
        )
    parts.append(
        f'<text x="{LABEL_WIDTH + BAR_WIDTH / 2:.1f}" y="{axis + 30}" text-anchor="middle">'
        "claims</text></svg>"
    )
    return "".join(parts)
