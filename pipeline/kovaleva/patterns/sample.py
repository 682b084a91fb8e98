"""Which maps to label by eye: a seeded sample that over-samples the rare pattern types.

Kovaleva et al. labelled ~400 maps. Drawn uniformly, almost all maps of a small model are
vertical or heterogeneous, so the rare types would get a handful of labels. The sampler
therefore sorts every map of the dumps by the threshold rule (`heuristic`), *only to choose
which maps to look at*, and draws `per_class` maps of each chosen rule class, spread as
evenly as possible over the (variant, task) cells where that class occurs, without
replacement and skipping maps sampled before. The rule's class is written beside each map
(`rule` in sample.csv) and never shown to annotators; the visual label decides.

A later round can look where a trained classifier is least sure instead (`boundary_round`):
every map gets the classifier's two most probable types and the gap between their
probabilities (`boundary_catalogue`), and for each boundary `a|b` the round takes, in every
(variant, task) cell, the maps whose two most probable types are a and b with the smallest
gap (`nearest`). The classifier chooses which maps to look at, never a label.

`next_round` is the patterns_sample stage's entry point; it calls `sample_round` or
`boundary_round`, which return the new rows of sample.csv (ids continue those already
sampled; `round` one more than the last; `stratum` what chose each map: `rule:<class>` or
`boundary:<a>|<b>`) and their maps with word pieces. A round chosen by another stratum uses
`unsampled`, `draw(..., by=<column>)` and `with_maps` the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from pipeline.analyses.patterns_train.settings import PatternRule, PatternsConfig
from pipeline.attention.store import AttentionStore
from pipeline.core.errors import PipelineError
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.apply import head_inputs
from pipeline.kovaleva.patterns.cnn import PatternCNN, load_classifier, predict
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
    return with_maps(stores, chosen.assign(stratum="rule:" + chosen["rule"]), sampled)


def boundary_catalogue(
    stores: Mapping[str, AttentionStore],
    variants: Sequence[str],
    networks: Sequence[PatternCNN],
    input_size: int,
    input_channels: Sequence[str],
    thresholds: PatternRule,
) -> pd.DataFrame:
    """`rule_catalogue`'s rows plus, from the classifier `networks` (an ensemble), each map's
    most probable type `first`, the next `second`, and `gap` = p(first) - p(second)."""
    frames = []
    for task, store in stores.items():
        for variant in variants:
            found = head_inputs(store, variant, task, None, input_size, input_channels, thresholds)
            top = predict(networks, found.inputs, found.pairs).topk(2, dim=-1)  # [maps, 2]
            frames.append(
                found.heads.assign(
                    variant=variant,
                    task=task,
                    first=np.asarray(CLASSES)[top.indices[:, 0].numpy()],
                    second=np.asarray(CLASSES)[top.indices[:, 1].numpy()],
                    gap=(top.values[:, 0] - top.values[:, 1]).numpy(),
                )
            )
    columns = [*ORIGIN, "length", "rule", "first", "second", "gap"]
    return pd.concat(frames, ignore_index=True)[columns]


def parse_boundary(boundary: str) -> tuple[str, str]:
    """'a|b' -> (a, b), two different pattern types."""
    parts = boundary.split("|")
    if len(parts) != 2 or parts[0] == parts[1] or not set(parts) <= set(CLASSES):
        raise PipelineError(
            f"boundary '{boundary}': write two different types as 'a|b', from {', '.join(CLASSES)}"
        )
    return parts[0], parts[1]


def nearest(
    catalogue: pd.DataFrame, boundaries: Sequence[str], per_boundary: int, seed: int
) -> pd.DataFrame:
    """For each boundary 'a|b', `per_boundary` maps whose two most probable types are a and
    b (either order) with the smallest gaps, spread evenly over the (variant, task) cells
    (`even_split`, cells in a seeded order); every row gets `stratum` = 'boundary:a|b'. The
    picks are shuffled with `seed`."""
    rng = np.random.default_rng(seed)
    picks = []
    for boundary in boundaries:
        a, b = parse_boundary(boundary)
        first, second = catalogue["first"], catalogue["second"]
        pool = catalogue[((first == a) & (second == b)) | ((first == b) & (second == a))]
        cells = [group for _, group in pool.groupby(["variant", "task"], sort=True)]
        cells = [cells[i] for i in rng.permutation(len(cells))]
        for cell, count in zip(
            cells, even_split(per_boundary, [len(c) for c in cells]), strict=True
        ):
            closest = cell.sort_values("gap", kind="stable").iloc[:count]
            picks.append(closest.assign(stratum=f"boundary:{boundary}"))
    chosen = pd.concat(picks) if picks else catalogue.iloc[:0].assign(stratum="")
    return chosen.iloc[rng.permutation(len(chosen))].reset_index(drop=True)


def boundary_round(
    stores: Mapping[str, AttentionStore],
    variants: Sequence[str],
    boundaries: Sequence[str],
    per_boundary: int,
    networks: Sequence[PatternCNN],
    input_size: int,
    input_channels: Sequence[str],
    thresholds: PatternRule,
    seed: int,
    sampled: pd.DataFrame,
) -> tuple[pd.DataFrame, dict[str, LabelledMap]]:
    """A new round of maps near the classifier's boundaries (see module): sample.csv rows
    (layers, heads from 1) and their maps. sampled: rows drawn before; never drawn again."""
    for boundary in boundaries:
        parse_boundary(boundary)  # fail before classifying every map
    catalogue = boundary_catalogue(
        stores, variants, networks, input_size, input_channels, thresholds
    )
    chosen = nearest(unsampled(catalogue, sampled), boundaries, per_boundary, seed)
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
    """Ids continuing `sampled`'s for the `chosen` rows (layers, heads from 0, with their
    `stratum`): their sample.csv rows (layers, heads from 1; `round` one more than
    `sampled`'s last) and their maps with word pieces."""
    chosen = chosen.copy()
    chosen.insert(0, "map_id", next_ids(sampled["map_id"].tolist(), len(chosen)))
    chosen["round"] = int(sampled["round"].max()) + 1 if len(sampled) else 1
    maps = {}
    for row in chosen.itertuples(index=False):
        store = stores[row.task]
        weights = store.maps(row.variant, row.task, [row.layer], [row.head], [row.example_id])
        tokens = tuple(store.tokens(row.task, row.example_id).tokens)
        maps[row.map_id] = LabelledMap(weights[row.example_id][0, 0], tokens)  # [n, n]
    rows = chosen.assign(layer=chosen["layer"] + 1, head=chosen["head"] + 1)
    return rows[list(SAMPLE_COLUMNS)], maps


def next_round(
    stores: Mapping[str, AttentionStore],
    settings: PatternsConfig,
    classifier: Path,
    seed: int,
    sampled: pd.DataFrame,
) -> tuple[pd.DataFrame, dict[str, LabelledMap]]:
    """The patterns_sample stage's round: near the boundaries of the classifier saved at
    `classifier` when `settings.sample.boundaries` names some (`boundary_round`), else by
    rule class (`sample_round`)."""
    s = settings.sample
    if not s.boundaries:
        return sample_round(
            stores, s.variants, s.classes, s.per_class, settings.heuristic, seed, sampled
        )
    saved = load_classifier(classifier)
    return boundary_round(
        stores,
        s.variants,
        s.boundaries,
        s.per_class,
        saved.ensembles[0],
        saved.input_size,
        saved.input_channels,
        settings.heuristic,
        seed,
        sampled,
    )
