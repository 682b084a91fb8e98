"""A labelling round drawn to measure the pattern types' shares (Olofsson et al. 2014;
Stehman 2014): strata are a frozen classifier's call, maps are drawn at random within each
stratum, and every drawn map carries its inclusion probability.

The frame is every classified map of a run (patterns_apply's predictions: variant, task,
example, layer, head and the classifier's `label`), less the maps labelled in earlier rounds.
With N_h the frame's maps of call h and n_h the maps drawn from it, a map of stratum h is
drawn with probability n_h / N_h. A cell's (task, variant) share of type k is then estimated
as sum_h W_ch P(k | h), with W_ch the cell's share of maps called h and P(k | h) read off the
round's labels in stratum h: inside [0, 1] by construction, no error matrix inverted.

The sizes are planned before anything is drawn (`plan_sizes`): over the strata, a Neyman
allocation n_h proportional to max over the cells and target types of W_ch S_hk, with
S_hk = sqrt(P(k | h) (1 - P(k | h))) from a planning guess of P(k | h), and at least
`floor` maps per stratum; `half_widths` gives the 95% half-width each cell's target share
would have under that allocation (the labelled maps' part of the variance alone: the dev
examples add to it, which the size's margin is for).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from pipeline.kovaleva.patterns import CLASSES

CELL = ["task", "variant"]
CALL = "call"  # the frozen stratifier's call in patterns_apply's predictions


def call_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """N_ch: the frame's maps per cell (rows: task, variant) and call (columns: CLASSES)."""
    counts = frame.groupby([*CELL, CALL]).size().unstack(fill_value=0)
    return counts.reindex(columns=list(CLASSES), fill_value=0)


def half_widths(
    weights: pd.DataFrame, p: pd.DataFrame, sizes: Mapping[str, int], targets: Mapping[str, list]
) -> pd.DataFrame:
    """Per cell (rows of `weights`, W_ch) and target (name -> the types it sums), the 95%
    half-width of the target share's estimate: 1.96 sqrt(sum_h W_ch^2 q_h (1 - q_h) / n_h),
    q_h the planning guess of P(target | h) (`p`: rows calls, columns types)."""
    n = pd.Series(sizes).reindex(weights.columns)
    found = {}
    for name, types in targets.items():
        q = p[types].sum(axis=1).reindex(weights.columns)
        variance = (weights**2).mul(q * (1 - q) / n, axis=1).sum(axis=1)
        found[name] = 1.96 * np.sqrt(variance)
    return pd.DataFrame(found)


def plan_sizes(
    weights: pd.DataFrame,
    p: pd.DataFrame,
    targets: Mapping[str, list],
    total: int,
    floor: int,
    capacity: Mapping[str, int],
) -> dict[str, int]:
    """`total` maps over the calls: Neyman-like, n_h proportional to the largest W_ch S_hk
    over cells and targets (module docstring), at least `floor` (and at most the stratum's
    `capacity`) each, rounded so that they sum to `total`."""
    scores = pd.concat(
        [weights.mul(np.sqrt(q * (1 - q)), axis=1) for q in
         (p[types].sum(axis=1).reindex(weights.columns) for types in targets.values())]
    ).max()  # fmt: skip
    sizes = dict.fromkeys(weights.columns, 0)
    left = total
    open_calls = list(weights.columns)
    while left > 0 and open_calls:  # hand out what is left by score, within floor and capacity
        share = scores[open_calls] / scores[open_calls].sum()
        for call in open_calls:
            sizes[call] = max(sizes[call], min(floor, capacity[call]))
        left = total - sum(sizes.values())
        wanted = {c: int(np.floor(left * share[c])) for c in open_calls}
        if not any(wanted.values()):
            wanted = {scores[open_calls].idxmax(): left}
        for call, extra in wanted.items():
            sizes[call] = min(sizes[call] + extra, capacity[call])
        open_calls = [c for c in open_calls if sizes[c] < capacity[c]]
        left = total - sum(sizes.values())
    return {c: int(n) for c, n in sizes.items()}


def draw_by_call(frame: pd.DataFrame, sizes: Mapping[str, int], seed: int) -> pd.DataFrame:
    """`sizes[h]` maps drawn at random without replacement from the frame's maps of call h,
    with `inclusion_probability` n_h / N_h; shuffled, so the sheets' order says nothing of
    the strata."""
    rng = np.random.default_rng(seed)
    picks = []
    for call in sorted(sizes):
        pool = frame[frame[CALL] == call]
        take = rng.choice(len(pool), size=sizes[call], replace=False)
        picks.append(pool.iloc[np.sort(take)].assign(inclusion_probability=sizes[call] / len(pool)))
    chosen = pd.concat(picks)
    return chosen.iloc[rng.permutation(len(chosen))].reset_index(drop=True)


def planning_guess(calls: Sequence[str], labels: Sequence[str], prior: float = 0.5) -> pd.DataFrame:
    """P(type | call) for planning: the labelled maps' (call, label) counts plus `prior` in
    every cell, rows normalised (rows: calls, columns: types)."""
    table = pd.crosstab(pd.Series(list(calls), name="call"), pd.Series(list(labels), name="type"))
    table = table.reindex(index=list(CLASSES), columns=list(CLASSES), fill_value=0) + prior
    return table.div(table.sum(axis=1), axis=0)
