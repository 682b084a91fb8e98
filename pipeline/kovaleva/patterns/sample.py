"""Which maps to label by eye: a seeded sample that over-samples the rare pattern types.

Kovaleva et al. labelled ~400 maps. Drawn uniformly, almost all maps of a small model are
vertical or heterogeneous, so the rare types would get a handful of labels. The sampler
therefore sorts every map of the dumps by the threshold rule (`heuristic`), *only to choose
which maps to look at*, and draws `per_class` maps of each chosen rule class, spread as
evenly as possible over the (variant, task) cells where that class occurs, without
replacement and skipping maps sampled before. The rule's class is written beside each map
(`rule` in sample.csv) and never shown to annotators; the visual label decides.

`sample_round` is the patterns_sample stage's entry point: it returns the new rows of
sample.csv (ids continue those already sampled) and their maps with word pieces. A round
chosen by another stratum (for example maps on which two classifier seeds disagree) uses
`unsampled`, `draw(..., by=<column>)` and `with_maps` the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from tqdm import tqdm

from pipeline.attention.store import AttentionStore
from pipeline.core.schema import PatternRule
from pipeline.kovaleva.patterns.heuristic import rule_by_head
from pipeline.kovaleva.patterns.labels import SAMPLE_COLUMNS
from pipeline.kovaleva.patterns.mapsets import LabelledMap

ORIGIN = ["variant", "task", "example_id", "layer", "head"]  # layers and heads from 0


def rule_catalogue(
    stores: Mapping[str, AttentionStore], variants: Sequence[str], thresholds: PatternRule
) -> pd.DataFrame:
    """Every map of the dumps: variant, task, example_id, layer, head (from 0), length, rule."""
    frames = []
    for task, store in stores.items():
        for variant in variants:
            stream = store.iter_maps(variant, task)
            for example_id, maps in tqdm(stream, desc=f"rule {task} {variant}", leave=False):
                info = store.tokens(task, example_id)
                rules = rule_by_head(maps, info.tokens, info.segment_ids, thresholds)
                frames.append(rules.assign(variant=variant, task=task, example_id=example_id))
    return pd.concat(frames, ignore_index=True)[[*ORIGIN, "length", "rule"]]


def even_split(total: int, capacities: Sequence[int]) -> list[int]:
    """Split `total` over cells as evenly as their capacities allow (earlier cells first)."""
    take = [0] * len(capacities)
    left = min(total, sum(capacities))
    while left:
        open_cells = [i for i, c in enumerate(capacities) if take[i] < c]
        share = max(left // len(open_cells), 1)
        for i in open_cells:
            step = min(share, capacities[i] - take[i], left)
            take[i] += step
            left -= step
            if not left:
                break
    return take


def draw(
    catalogue: pd.DataFrame, classes: Sequence[str], per_class: int, seed: int, by: str = "rule"
) -> pd.DataFrame:
    """`per_class` rows of each class of `classes` (the values of column `by`: the rule's
    class, or any other stratum that only chooses which maps to look at), spread evenly over
    the (variant, task) cells holding it (cells in a seeded order), then shuffled."""
    rng = np.random.default_rng(seed)
    picks = []
    for name in classes:
        pool = catalogue[catalogue[by] == name]
        cells = [group for _, group in pool.groupby(["variant", "task"], sort=True)]
        order = rng.permutation(len(cells))
        cells = [cells[i] for i in order]
        for cell, count in zip(cells, even_split(per_class, [len(c) for c in cells]), strict=True):
            picks.append(cell.iloc[np.sort(rng.choice(len(cell), size=count, replace=False))])
    chosen = pd.concat(picks) if picks else catalogue.iloc[:0]
    return chosen.iloc[rng.permutation(len(chosen))].reset_index(drop=True)


def next_ids(existing: Sequence[str], count: int) -> list[str]:
    """Map ids v0001, v0002, ... continuing after the highest existing one."""
    numbers = [int(m[1:]) for m in existing if m[:1] == "v" and m[1:].isdigit()]
    start = max(numbers, default=0) + 1
    return [f"v{i:04d}" for i in range(start, start + count)]


def sample_round(
    stores: Mapping[str, AttentionStore],
    variants: Sequence[str],
    classes: Sequence[str],
    per_class: int,
    thresholds: PatternRule,
    seed: int,
    sampled: pd.DataFrame,
) -> tuple[pd.DataFrame, dict[str, LabelledMap]]:
    """A new round of maps to label: sample.csv rows (layers, heads from 1) and their maps.

    sampled: the rows of sample.csv drawn before (layers, heads from 1); never drawn again."""
    catalogue = rule_catalogue(stores, variants, thresholds)
    chosen = draw(unsampled(catalogue, sampled), classes, per_class, seed)
    return with_maps(stores, chosen, sampled)


def unsampled(catalogue: pd.DataFrame, sampled: pd.DataFrame) -> pd.DataFrame:
    """The rows of `catalogue` (layers, heads from 0) not among `sampled` (from 1)."""
    before = set(
        map(
            tuple,
            sampled.assign(layer=sampled["layer"] - 1, head=sampled["head"] - 1)[ORIGIN].values,
        )
    )
    return catalogue[[tuple(row) not in before for row in catalogue[ORIGIN].values]]


def with_maps(
    stores: Mapping[str, AttentionStore], chosen: pd.DataFrame, sampled: pd.DataFrame
) -> tuple[pd.DataFrame, dict[str, LabelledMap]]:
    """Ids continuing `sampled`'s for the `chosen` rows (layers, heads from 0): their
    sample.csv rows (layers, heads from 1) and their maps with word pieces."""
    chosen = chosen.copy()
    chosen.insert(0, "map_id", next_ids(sampled["map_id"].tolist(), len(chosen)))
    maps = {}
    for row in chosen.itertuples(index=False):
        store = stores[row.task]
        weights = store.maps(row.variant, row.task, [row.layer], [row.head], [row.example_id])
        tokens = tuple(store.tokens(row.task, row.example_id).tokens)
        maps[row.map_id] = LabelledMap(weights[row.example_id][0, 0], tokens)  # [n, n]
    rows = chosen.assign(layer=chosen["layer"] + 1, head=chosen["head"] + 1)
    return rows[list(SAMPLE_COLUMNS)], maps
