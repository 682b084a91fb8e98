"""patterns_classify: the pattern type of any attention maps (not a DVC stage).

    python -m tools.patterns_classify MAPS.npz --out LABELS.csv [--classifier CNN.pt]

MAPS.npz holds, for every map id, `map_<id>` (float array [n, n]: rows queries, columns keys)
and `tokens_<id>` (the n word pieces as strings, [CLS] first, [SEP] closing each sentence).
Writes LABELS.csv with the rows `id,label` (label: one of the five types), classified by the
CNN of patterns_train (default outputs/patterns/cnn.pt). A malformed file (a non-square map,
tokens that do not match the map's size, a map without tokens) fails in one line naming the
entry, and writes nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from pipeline.core import layout
from pipeline.core.errors import exit_on_error
from pipeline.core.io import write_table
from pipeline.kovaleva.patterns.apply import classify_map_set


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("maps", type=Path, help=".npz file with map_<id> and tokens_<id>")
    parser.add_argument("--out", type=Path, required=True, help="the CSV to write (id,label)")
    parser.add_argument("--classifier", type=Path, default=layout.pattern_classifier("outputs"))
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    with exit_on_error():
        labels = classify_map_set(args.maps, args.classifier)
    write_table(args.out, labels)
    print(f"{len(labels)} maps -> {args.out}: {labels['label'].value_counts().to_dict()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
