"""The pattern classifier made of the cross-validation's own networks, against the final fits.

    python -m benchmarks.pattern_fold_classifier            # runs it; writes the record below
    python -m benchmarks.pattern_fold_classifier --table    # the kept record as Markdown

writes benchmarks/records/pattern_fold_classifier.csv (every score),
pattern_fold_classifier_seeds.csv (the seed check) and pattern_fold_classifier_cost.csv, and
prints whether the rule below holds.

Why
---
`patterns_train` trains 44 networks: 5 folds x 4 to cross-validate, then 12 on every labelled
map (the classifier) and 12 more (the seed-check ensemble). Neither round of the design study
found a cheaper network that kept its quality, so this study cuts the other term: the final
fits. The cross-validation's 20 networks already see every labelled map (each 4 of the 5
folds); averaged, they can be the classifier, and their two halves by seed the seed check.
The stage would then train 5 x 4 networks on 80% of the maps, 16 network passes over the
labelled set instead of 40. The out-of-fold predictions, which the CV scores and the claims'
correction read, do not change at all: the same folds, seeds and networks. What can change
is the classifier's quality on maps it never saw, and the seed check.

The plan (fixed before any network of this study was trained)
-------------------------------------------------------------
- An outer split of every labelled map of `patterns.labels_from`: 5 folds grouped by input
  example and stratified by label (`StratifiedGroupKFold`, seed `OUTER_SEED` = 2026). Each
  outer fold's test maps are seen by neither arm; every labelled map is tested once.
- On each outer fold's training maps, today's design (`conf/patterns/default.yaml`) trained
  as the stage trains it (2 workers, one network at a time), in two arms:
  * *final fits* (today's stage): 12 networks on all the training maps (seeds 42-53), the
    classifier, and 12 more (54-65), the seed check;
  * *from the folds* (the candidate): the stage's own cross-validation of the training maps
    (5 inner folds, seed 42, 4 networks per fold, seeds 42-45); the classifier averages all
    20 networks' probabilities; the seed check compares its two halves by seed, the networks
    of seeds 42-43 of each fold (10) against those of seeds 44-45 (10).
- Scored on each model's outer test maps, pooled over the outer folds: each arm's
  classifier's accuracy, Cohen's kappa, vertical's F1 and each class's recall, with 95%
  intervals that resample input examples (1000 resamples), and the paired difference
  *from the folds* minus *final fits* (`pattern_design.score_rows`). Also recorded, outside
  the rule: *from the folds*, one half (the 10 networks of seeds 42-43), as the classifier.
- The seed check on the same test maps: the share of maps the two seed ensembles of each arm
  label differently, and the largest change of a class share between them per model. The
  stage's own `seed_stability` (on the attention stores) is measured after the change.
- Cost: each arm's wall seconds of training over the five outer folds on 2 cores, and its
  network-map-epochs.
- The rule: *from the folds* replaces the final fits if, on each model's test maps (minilm_l6,
  mpnet_base), (a) the lower bound of the paired accuracy difference is >= -0.02 and so is the
  kappa difference's, and (b) vertical+diagonal recall and vertical's F1 are each no more than
  0.02 below the final fits'. Otherwise the final fits stay, and the table says by how much
  it missed.

As run: the fold classifier averages its two halves' probabilities, each as `cnn.predict`
gives them. That is the mean over all 20 networks, except on a one-sentence map, where each
half rescales its probabilities without block before the two are averaged.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch
from sklearn.model_selection import StratifiedGroupKFold

from benchmarks.pattern_design import (
    RECORDS,
    SCORE_COLUMNS,
    SEED,
    candidate_settings,
    conf_settings,
    label_folders,
    load_average,
    record_parser,
    score_rows,
    subsets,
)
from pipeline.analyses.patterns_train.settings import PatternClassifier
from pipeline.core.io import write_table
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.apply import seed_change
from pipeline.kovaleva.patterns.cnn import PatternCNN, inputs_of, pairs_of, predict
from pipeline.kovaleva.patterns.train import LabelledSet, ensemble_jobs, fit_all, load_labelled_set

OUTER_SEED = 2026
OUTER_FOLDS = 5
PER_FOLD = 4  # networks per inner fold: seeds SEED .. SEED + 3
FINAL = 12  # networks of each of the final fits' two ensembles
FINAL_FITS, FROM_FOLDS, ONE_HALF = "final fits", "from the folds", "from the folds, one half"
RECORD = "pattern_fold_classifier.csv"
SEEDS_RECORD = "pattern_fold_classifier_seeds.csv"
COST_RECORD = "pattern_fold_classifier_cost.csv"
COLUMNS = ["arm", *SCORE_COLUMNS[2:]]  # an arm's score per model, and its paired difference
MARGIN = 0.02  # the rule: how far below the final fits a bound or a score may fall


def labels_of(probs: torch.Tensor) -> np.ndarray:
    """Class names [N] of probabilities [N, C]."""
    return np.asarray(CLASSES)[probs.argmax(-1).numpy()]


def halves(networks: Sequence[PatternCNN], folds: int) -> tuple[list, list]:
    """The fold networks (fold-major, PER_FOLD each) split by seed: the first half of each
    fold's networks, and the second."""
    half = PER_FOLD // 2
    first = [networks[f * PER_FOLD + i] for f in range(folds) for i in range(half)]
    second = [networks[f * PER_FOLD + i] for f in range(folds) for i in range(half, PER_FOLD)]
    return first, second


def outer_fold(
    labelled: LabelledSet,
    inputs: torch.Tensor,
    pairs: torch.Tensor,
    settings: PatternClassifier,
    train_rows: np.ndarray,
    test_rows: np.ndarray,
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Both arms trained on `train_rows` and applied to `test_rows`: each ensemble's class
    names on the test maps, and each arm's training wall seconds."""
    labels = labelled.labels
    seconds, predicted = {}, {}
    started = time.perf_counter()
    jobs = ensemble_jobs(train_rows, 2 * FINAL, SEED)
    final = fit_all(inputs, labels, settings, jobs, settings.workers)
    seconds[FINAL_FITS] = time.perf_counter() - started
    test, test_pairs = inputs[test_rows], pairs[test_rows]
    predicted[FINAL_FITS] = labels_of(predict(final[:FINAL], test, test_pairs))
    predicted[f"{FINAL_FITS}, seed check"] = labels_of(predict(final[FINAL:], test, test_pairs))

    inner = StratifiedGroupKFold(n_splits=settings.folds, shuffle=True, random_state=SEED)
    splits = inner.split(np.zeros(len(train_rows)), labels[train_rows], labelled.groups[train_rows])
    jobs = [job for rows, _ in splits for job in ensemble_jobs(train_rows[rows], PER_FOLD, SEED)]
    started = time.perf_counter()
    networks = fit_all(inputs, labels, settings, jobs, settings.workers)
    seconds[FROM_FOLDS] = time.perf_counter() - started
    first, second = halves(networks, settings.folds)
    probs_first = predict(first, test, test_pairs)  # [T, C]
    probs_second = predict(second, test, test_pairs)
    predicted[FROM_FOLDS] = labels_of((probs_first + probs_second) / 2)
    predicted[ONE_HALF] = labels_of(probs_first)
    predicted[f"{FROM_FOLDS}, seed check"] = labels_of(probs_second)
    return predicted, seconds


def seed_rows(labelled: LabelledSet, predicted: dict[str, np.ndarray]) -> list[tuple]:
    """(arm, model, maps, share of maps labelled differently, largest class-share change)
    between each arm's two seed ensembles."""
    rows = []
    rows_of = subsets(labelled)
    for arm, a, b in [
        (FINAL_FITS, FINAL_FITS, f"{FINAL_FITS}, seed check"),
        (FROM_FOLDS, ONE_HALF, f"{FROM_FOLDS}, seed check"),
    ]:
        for folder in labelled.folders:
            where = rows_of[folder]
            first, second = predicted[a][where], predicted[b][where]
            pair = pd.DataFrame({"task": folder, "variant": "held out", "label": first})
            change = seed_change(pair.assign(label_seed2=second))  # as patterns_apply measures it
            rows.append((arm, folder, len(where), np.mean(first != second), change))
    return rows


def main() -> None:
    args = record_parser(__doc__, figure=False).parse_args()
    if args.table:
        print(fold_classifier_table())
        return
    torch.set_num_threads(1)
    labelled = load_labelled_set(label_folders())
    settings = candidate_settings(conf_settings(), "today")
    labels = labelled.labels
    inputs = inputs_of(labelled.maps, settings.input_size, settings.input_channels)
    pairs = pairs_of(labelled.maps)
    outer = StratifiedGroupKFold(n_splits=OUTER_FOLDS, shuffle=True, random_state=OUTER_SEED)
    predicted: dict[str, np.ndarray] = {}
    seconds = {FINAL_FITS: 0.0, FROM_FOLDS: 0.0}
    loads = [load_average()]
    for k, (train_rows, test_rows) in enumerate(
        outer.split(np.zeros(len(labels)), labels, labelled.groups)
    ):
        fold_predicted, fold_seconds = outer_fold(
            labelled, inputs, pairs, settings, train_rows, test_rows
        )
        for name, values in fold_predicted.items():
            predicted.setdefault(name, np.empty(len(labels), dtype=object))[test_rows] = values
        for arm, s in fold_seconds.items():
            seconds[arm] += s
        loads.append(load_average())
        print(f"outer fold {k}: {fold_seconds}, load {loads[-1]:.2f}", flush=True)
    predicted = {name: values.astype(str) for name, values in predicted.items()}
    rows = []
    rows_of = subsets(labelled)
    for folder in labelled.folders:
        where = rows_of[folder]
        for arm in (FINAL_FITS, FROM_FOLDS, ONE_HALF):
            for score in score_rows(
                labels[where],
                [predicted[arm][where]],
                [predicted[FINAL_FITS][where]],
                labelled.groups[where],
                args.resamples,
            ):
                rows.append((arm, folder, *score))
    maps = len(labels)
    inner_share = (settings.folds - 1) / settings.folds  # of an outer training part
    train_maps = maps * (OUTER_FOLDS - 1)  # summed over the outer folds
    cost = pd.DataFrame(
        [
            (FINAL_FITS, seconds[FINAL_FITS], 2 * FINAL * train_maps * settings.epochs),
            (
                FROM_FOLDS,
                seconds[FROM_FOLDS],
                round(settings.folds * PER_FOLD * inner_share * train_maps * settings.epochs),
            ),
        ],
        columns=["arm", "train_wall_s", "network_map_epochs"],
    ).assign(load_1min_max=max(loads))
    columns = ["arm", "subset", "maps", "disagree", "max_share_change"]
    write_table(RECORDS / RECORD, pd.DataFrame(rows, columns=COLUMNS).round(4))
    write_table(
        RECORDS / SEEDS_RECORD,
        pd.DataFrame(seed_rows(labelled, predicted), columns=columns).round(4),
    )
    write_table(RECORDS / COST_RECORD, cost.round(2))
    print(fold_classifier_table())


def passes(table: pd.DataFrame) -> dict[str, bool]:
    """Per model: whether the module's rule holds for *from the folds*."""
    out = {}
    candidate = table[table["arm"] == FROM_FOLDS]
    for folder, rows in candidate.groupby("subset", sort=False):
        score = rows.set_index("score")
        out[folder] = bool(
            score.loc["accuracy", "diff_low"] >= -MARGIN
            and score.loc["kappa", "diff_low"] >= -MARGIN
            and score.loc["recall_vertical+diagonal", "diff"] >= -MARGIN
            and score.loc["f1_vertical", "diff"] >= -MARGIN
        )
    return out


def fold_classifier_table(folder=RECORDS) -> str:
    """The kept records as Markdown: scores per model and arm, the seed check, the cost."""
    table = pd.read_csv(folder / RECORD)
    lines = [
        "| maps | score | final fits | from the folds | difference (95% interval) | one half |",
        "|---|---|---|---|---|---|",
    ]
    for (subset, score), rows in table.groupby(["subset", "score"], sort=False):
        arm = rows.set_index("arm")
        base, mine, half = arm.loc[FINAL_FITS], arm.loc[FROM_FOLDS], arm.loc[ONE_HALF]
        lines.append(
            f"| {subset} | {score} | {base.estimate:.3f} [{base.ci_low:.3f}, {base.ci_high:.3f}] "
            f"| {mine.estimate:.3f} [{mine.ci_low:.3f}, {mine.ci_high:.3f}] "
            f"| {mine['diff']:+.3f} [{mine.diff_low:+.3f}, {mine.diff_high:+.3f}] "
            f"| {half.estimate:.3f} |"
        )
    seeds = pd.read_csv(folder / SEEDS_RECORD)
    lines += [
        "",
        "| seed check | maps | labelled differently | largest class-share change |",
        "|---|---|---|---|",
    ]
    for r in seeds.itertuples(index=False):
        lines.append(
            f"| {r.arm}, {r.subset} | {r.maps} | {r.disagree:.3f} | {r.max_share_change:.3f} |"
        )
    cost = pd.read_csv(folder / COST_RECORD).set_index("arm")
    ratio = cost.loc[FROM_FOLDS, "train_wall_s"] / cost.loc[FINAL_FITS, "train_wall_s"]
    lines += [
        "",
        "| arm | training over the outer folds, s (2 cores) | network-map-epochs |",
        "|---|---|---|",
        *[
            f"| {arm} | {r.train_wall_s:.0f} | {int(r.network_map_epochs):,} |"
            for arm, r in cost.iterrows()
        ],
        "",
        f"*from the folds* / *final fits*, training seconds: {ratio:.2f}; the highest load "
        f"average during the run: {cost['load_1min_max'].iloc[0]:.2f}.",
    ]
    verdict = passes(table)
    held = "holds" if all(verdict.values()) else "does not hold"
    lines.append(f"\nThe rule on {', '.join(verdict)}: {held}.")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
