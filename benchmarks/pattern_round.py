"""The pattern CNN with and without its latest labelling round, over four fold seeds.

    python -m benchmarks.pattern_round            # runs it; writes the record below
    python -m benchmarks.pattern_round --table    # the kept record as Markdown
    python -m benchmarks.pattern_round --figure   # its figure, drawn again

writes benchmarks/records/pattern_round.csv, its figure pattern_round.png (each score's paired
difference on each model's original maps) and prints whether the quality criterion holds.

Why
---
Neither round of the design study (`pattern_design`, `pattern_design_seeds`) found a design
that lifts what the classifier misses most, vertical+diagonal maps called vertical, on both
models. So the classifier gets more labels where it is least sure: a round of maps drawn by
the pooled classifier at its boundaries vertical|vertical+diagonal and heterogeneous|vertical,
24 per boundary on each model (`NEW_ROUNDS`; the draw is in each label folder's README),
labelled by two annotators who saw only the guide and the sheets, and a third on the maps they
label differently.

The plan (fixed before any network learnt from or was scored on the round's labels)
-----------------------------------------------------------------------------------
- The round's labels join the labelled set, whatever they score: they are labels of the
  project's maps, the stage learns from every labelled map, and what they do to the scores is
  reported, not used to choose. The design stays today's (`conf/patterns/default.yaml`).
- Two arms, trained as the stage trains them (`pattern_design.cross_validate`: 5 folds grouped
  by input example and stratified by label, 4 networks per fold, 2 workers): *before*, on the
  maps labelled before the round; *with the round*, on every labelled map. Fold seeds 42, 43,
  44 and 45, each drawing the folds and the networks' seeds, alike in both arms.
- On each model's maps labelled before the round (the original maps): accuracy, Cohen's
  kappa, vertical's F1 and each class's recall of the out-of-fold labels, each the mean over
  the four seeds, with 95% intervals that resample input examples (1000 resamples, both arms
  and every seed on the same resamples), and the paired difference *with the round* minus
  *before*. The round's own maps are scored apart (out-of-fold, *with the round* only), so
  that easy new maps cannot lift the score.
- The criterion, judged on the original maps of each model: the lower bound of the paired
  accuracy difference >= -0.02, and so is the kappa difference's; vertical+diagonal recall
  higher; vertical's F1 not lower (`pattern_design.passes_rule`). Whether it holds is
  reported; it does not decide whether the labels join.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from benchmarks.pattern_design import (
    RECORDS,
    SCORE_COLUMNS,
    candidate_settings,
    conf_settings,
    cross_validate,
    label_folders,
    passes_rule,
    record_parser,
    score_rows,
)
from pipeline.core.io import atomic_path, write_table
from pipeline.kovaleva.patterns.train import LabelledSet, load_labelled_set

NEW_ROUNDS = {"minilm_l6": 6, "mpnet_base": 3}  # each label folder's boundary round of this study
FOLD_SEEDS = (42, 43, 44, 45)
PER_FOLD = 4
WITH = "with the round"
RECORD = "pattern_round.csv"
FIGURE = "pattern_round.png"


def in_new_round(labelled: LabelledSet) -> np.ndarray:
    """bool [N]: which labelled maps belong to their folder's round in `NEW_ROUNDS`."""
    origin = labelled.origin
    rounds = origin["labels_from"].map(NEW_ROUNDS)
    return (origin["round"] == rounds).to_numpy()


def without(labelled: LabelledSet, dropped: np.ndarray) -> LabelledSet:
    """The labelled set less the maps `dropped` (bool [N]), in the same order."""
    kept = np.flatnonzero(~dropped)
    origin = labelled.origin.iloc[kept].reset_index(drop=True)
    ids = set(origin["map_id"])
    return replace(
        labelled,
        origin=origin,
        maps=[labelled.maps[i] for i in kept],
        all_labels=labelled.all_labels[labelled.all_labels["map_id"].isin(ids)],
    )


def main() -> None:
    args = record_parser(__doc__).parse_args()
    if args.table:
        print(round_table())
        return
    if args.figure:
        figure(pd.read_csv(RECORDS / RECORD), RECORDS / FIGURE)
        return
    started = time.perf_counter()
    torch.set_num_threads(1)
    labelled = load_labelled_set(label_folders())
    new = in_new_round(labelled)
    if not new.any():
        raise SystemExit(f"no labelled map of the rounds {NEW_ROUNDS}; label the round first")
    before = without(labelled, new)
    settings = replace(candidate_settings(conf_settings(), "today"), cv_ensemble=PER_FOLD)
    runs: dict[str, list[np.ndarray]] = {"before": [], WITH: []}
    for seed in FOLD_SEEDS:
        for arm, data in (("before", before), (WITH, labelled)):
            run = cross_validate(data, settings, seed)
            runs[arm].append(run.predicted[PER_FOLD])
            print(f"{arm}, fold seed {seed}: {run.wall_s:.0f} s", flush=True)
    origin = labelled.origin
    in_before = np.cumsum(~new) - 1  # [N]: each labelled row's row in `before` (if kept)
    rows = []
    for folder in labelled.folders:
        mine = (origin["labels_from"] == folder).to_numpy()
        original, added = np.flatnonzero(mine & ~new), np.flatnonzero(mine & new)
        scored = [(folder, original, [p[in_before[original]] for p in runs["before"]])]
        if len(added):  # scored against itself: only its estimate and interval are read
            scored.append((f"{folder} new round", added, [p[added] for p in runs[WITH]]))
        for subset, where, base in scored:
            for score in score_rows(
                labelled.labels[where],
                [p[where] for p in runs[WITH]],
                base,
                labelled.groups[where],
                args.resamples,
            ):
                rows.append((WITH, PER_FOLD, subset, *score))
    table = pd.DataFrame(rows, columns=SCORE_COLUMNS)
    write_table(RECORDS / RECORD, table.round(4))
    figure(table, RECORDS / FIGURE)
    print(round_table())
    print(f"{time.perf_counter() - started:.0f} s in all")


def figure(table: pd.DataFrame, path: Path) -> None:
    """Per model, each score's paired difference (with the round minus before) on the maps
    labelled before the round, with its 95% interval; the criterion's -0.02 and 0 marked."""
    original = table[~table["subset"].str.endswith("new round")]
    models = list(original["subset"].unique())
    fig, axes = plt.subplots(1, len(models), figsize=(5 * len(models), 3.8), sharey=True)
    for ax, model in zip(np.atleast_1d(axes), models, strict=True):
        rows = original[original["subset"] == model].reset_index(drop=True)
        y = np.arange(len(rows))[::-1]  # the first score on top
        ax.errorbar(
            rows["diff"],
            y,
            xerr=[rows["diff"] - rows["diff_low"], rows["diff_high"] - rows["diff"]],
            fmt="o",
            capsize=3,
        )
        ax.axvline(0.0, color="grey", linewidth=0.8)
        ax.axvline(-0.02, color="grey", linewidth=0.8, linestyle="--")
        ax.set_yticks(y, rows["score"])
        ax.set_xlabel("with the round minus before (95% CI)")
        ax.set_title(f"{model}: maps labelled before the round")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)


def round_table(folder: Path = RECORDS) -> str:
    """The kept record as Markdown: per model, the original maps' scores before the round and
    with it (means over the fold seeds; with the round, its 95% interval) and their paired
    difference; then the round's own maps; and whether the criterion holds."""
    table = pd.read_csv(folder / RECORD)
    models = tuple(s for s in table["subset"].unique() if not s.endswith("new round"))
    lines = [
        "| maps | score | before the round | with the round | difference (95% interval) |",
        "|---|---|---|---|---|",
    ]
    for row in table.itertuples(index=False):
        original = not row.subset.endswith("new round")
        before = f"{row.estimate - row.diff:.3f}" if original else ""
        difference = (
            f"{row.diff:+.3f} [{row.diff_low:+.3f}, {row.diff_high:+.3f}]" if original else ""
        )
        lines.append(
            f"| {row.subset} | {row.score} | {before} | {row.estimate:.3f} [{row.ci_low:.3f}, "
            f"{row.ci_high:.3f}] | {difference} |"
        )
    holds = passes_rule(table[table["subset"].isin(models)], models).iloc[0]
    lines.append("")
    lines.append(f"The criterion on the original maps of {', '.join(models)}: "
                 + ("holds." if holds else "does not hold."))  # fmt: skip
    return "\n".join(lines)


if __name__ == "__main__":
    main()
