"""merge_round: a labelled share round joins its model's label folder (not a stage).

    python -m tools.merge_round data/share_round/minilm_l6 --into data/annotations/minilm_l6

A round drawn by `tools.patterns_round` is labelled in a folder of its own. Once labelled,
its maps, their origin rows (with `inclusion_probability`) and their labels are appended to
the label folder's maps.npz, sample.csv and visual.csv, and the round's frozen stratifier,
plan and planned half-widths are kept beside them (`stratifier.pt`, `share_plan.csv`,
`share_half_widths.csv`); patterns_train then learns from the round's labels and
patterns_apply estimates the shares from them (`share_estimate.read_round`). Every file is
checked before any is written; each is written to a temporary name, then renamed. The round's
folder is left as it was: remove it once the merge is committed.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pandas as pd

from pipeline.core.errors import PipelineError, exit_on_error
from pipeline.core.io import atomic_path, write_table
from pipeline.kovaleva.patterns.labels import (
    MAPS_FILE,
    SAMPLE_FILE,
    VISUAL_FILE,
    read_labels,
    read_sample,
)
from pipeline.kovaleva.patterns.mapsets import read_map_set, write_map_set
from pipeline.kovaleva.patterns.share_estimate import KEPT_FILES


def merged_tables(
    round_folder: Path, label_folder: Path
) -> tuple[pd.DataFrame, pd.DataFrame, dict, int]:
    """The label folder's sample, visual labels and maps with the round's appended, and the
    round's map count, checked: the round's map ids are new to the folder, and every round
    map has its map and labels."""
    sample, extra = read_sample(label_folder / SAMPLE_FILE), read_sample(round_folder / SAMPLE_FILE)
    clash = extra["map_id"].isin(sample["map_id"])
    if clash.any():
        raise PipelineError(
            f"{round_folder}: map id '{extra['map_id'][clash].iloc[0]}' is already in "
            f"{label_folder}; this round was merged before (or draw it again with new ids)"
        )
    if "inclusion_probability" not in extra or extra["inclusion_probability"].isna().any():
        raise PipelineError(
            f"{round_folder / SAMPLE_FILE}: every map needs its inclusion_probability; "
            "merge only a round drawn by tools.patterns_round"
        )
    labels = read_labels(round_folder, extra["map_id"])
    unlabelled = ~extra["map_id"].isin(labels["map_id"])
    if unlabelled.any():
        raise PipelineError(
            f"{round_folder}: map '{extra['map_id'][unlabelled].iloc[0]}' has no label; "
            "finish labelling the round before merging it"
        )
    visual = pd.concat(
        [pd.read_csv(label_folder / VISUAL_FILE, dtype=str, keep_default_na=False),
         pd.read_csv(round_folder / VISUAL_FILE, dtype=str, keep_default_na=False)],
        ignore_index=True,
    )  # fmt: skip
    maps = read_map_set(label_folder / MAPS_FILE) | read_map_set(round_folder / MAPS_FILE)
    return pd.concat([sample, extra], ignore_index=True), visual, maps, len(extra)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("round", type=Path, help="the labelled round's folder")
    parser.add_argument("--into", type=Path, required=True, help="the model's label folder")
    args = parser.parse_args(argv)
    with exit_on_error():
        kept = [args.round / source for source in KEPT_FILES]
        missing = [str(p) for p in kept if not p.exists()]
        if missing:
            raise PipelineError(f"{missing[0]} not found; merge a round of tools.patterns_round")
        sample, visual, maps, merged = merged_tables(args.round, args.into)
        write_map_set(args.into / MAPS_FILE, maps)
        write_table(args.into / VISUAL_FILE, visual)
        write_table(args.into / SAMPLE_FILE, sample)
        for source, target in KEPT_FILES.items():
            with atomic_path(args.into / target) as tmp:
                shutil.copyfile(args.round / source, tmp)
    print(f"merged the round's {merged} maps into {args.into}; {args.round} is left as it was")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
