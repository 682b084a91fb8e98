"""Sheets of the maps two annotators labelled differently, for a third annotator to decide.

    python -m pipeline.kovaleva.patterns.disputed data/annotations/mpnet_base \
        --between annotator-j annotator-k --out DIR [--seed 2031]

Reads the folder's label files, finds the maps that both annotators labelled and labelled
differently, shuffles them with `--seed` (so no order hints at a type) and renders them on
sheets like the sampler's (`sheets.py`: map id, length, word pieces; no label). The third
annotator sees only these sheets and the guide; their labels go into `visual.csv` like any
other, and `labels.resolve` takes the majority.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.core.errors import PipelineError, exit_on_error
from pipeline.kovaleva.patterns.agreement import paired_labels
from pipeline.kovaleva.patterns.labels import MAPS_FILE, read_labels
from pipeline.kovaleva.patterns.mapsets import read_map_set
from pipeline.kovaleva.patterns.sheets import render_sheets


def disputed_maps(folder: Path, first: str, second: str, seed: int) -> list[str]:
    """The ids of the maps `first` and `second` both labelled, with different labels, in an
    order shuffled by `seed`."""
    return disputed(read_labels(folder, read_map_set(folder / MAPS_FILE)), first, second, seed)


def disputed(labels: pd.DataFrame, first: str, second: str, seed: int) -> list[str]:
    """`disputed_maps` on a folder's labels (`labels.read_labels`)."""
    for annotator in (first, second):
        if annotator not in set(labels["annotator"]):
            raise PipelineError(f"the label folder holds no label by {annotator}; check the name")
    pairs = paired_labels(labels, first, second)
    differing = sorted(pairs.loc[pairs["first"] != pairs["second"], "map_id"])
    order = np.random.default_rng(seed).permutation(len(differing))
    return [differing[i] for i in order]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a label folder, e.g. data/annotations/<model>")
    parser.add_argument("--between", nargs=2, required=True, metavar="ANNOTATOR")
    parser.add_argument("--out", type=Path, required=True, help="where the sheets go")
    parser.add_argument("--seed", type=int, default=0, help="seeds the order of the maps")
    args = parser.parse_args(argv)
    with exit_on_error():
        maps = read_map_set(args.folder / MAPS_FILE)
        ids = disputed(read_labels(args.folder, maps), *args.between, args.seed)
        if not ids:
            raise PipelineError(f"{' and '.join(args.between)} agree on every map they share")
        sheets = render_sheets({i: maps[i] for i in ids}, args.out)
    print(f"{len(ids)} disputed maps on {len(sheets)} sheets in {args.out}")


if __name__ == "__main__":
    main()
