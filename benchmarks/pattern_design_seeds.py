"""The pattern CNN's design study, second round: the near misses again, over new fold seeds.

    python -m benchmarks.pattern_design_seeds            # runs it; writes the records below
    python -m benchmarks.pattern_design_seeds --table    # the kept records as Markdown

writes benchmarks/records/pattern_design_seeds.csv (every score) and
benchmarks/records/pattern_design_seeds_cost.csv (seconds, load), and prints the candidate
that the rule below chooses.

Why a second round
------------------
The first round (`pattern_design`, one cross-validation seed) chose nothing: no candidate
passed its rule. Its nearest misses swung between two ensembles of one design (2 and 4
networks per fold), which is the noise of a single cross-validation seed. So they run again,
over fold seeds the first round did not use, with the stage's training as it now is: one
network at a time in each of 2 worker processes, on the CPU's own kernels.

The plan (fixed before any candidate of this round was run)
-----------------------------------------------------------
- Candidates (`pattern_design.CANDIDATES`): `today` (4 networks per fold, the reference),
  `8x8 +all 4 layers` and `+all`, each scored with the first 2 and all 4 networks of each
  fold's ensemble.
- Fold seeds 43, 44 and 45: each seed draws the folds (StratifiedGroupKFold, grouped by input
  example, stratified by label) and the networks' seeds, as the stage's `seed` does. Every
  candidate and today's design run on the same three seeds.
- Scores, on each model's maps and on each model's boundary round apart: accuracy, Cohen's
  kappa, vertical's F1 and each class's recall, each the mean over the three seeds of that
  seed's out-of-fold score, and its paired difference against today's. The 95% interval
  resamples input examples (1000 resamples): each resample scores every seed's out-of-fold
  labels, of both classifiers, on the same examples.
- Cost: each candidate against today's in the interleaved probe of `pattern_design` (2
  networks x 2 epochs on every map, one thread, alternating, the faster of two kept) times the
  ratio of the stage's network passes (`stage_ratio`); the cross-validations' wall seconds and
  the load average are recorded beside it.

The rule (fixed before any candidate of this round was run)
-----------------------------------------------------------
The rule of the first round, on the seed-averaged scores: among the candidates and their
networks per fold, choose the one whose `stage_ratio` is least such that, on each model's
maps (minilm_l6 and mpnet_base), (a) the lower bound of the paired accuracy difference against
today's is >= -0.02, and so is the kappa difference's; (b) vertical+diagonal recall is higher
than today's; (c) vertical's F1 is not lower than today's. If none passes, today's design
stays.
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import torch

from benchmarks.pattern_design import (
    RECORDS,
    SCORE_COLUMNS,
    TODAY,
    CrossValidated,
    candidate_settings,
    conf_settings,
    cross_validate,
    interleaved_ratio,
    label_folders,
    load_average,
    passes_rule,
    record_parser,
    score_rows,
    stage_network_map_epochs,
    subsets,
)
from pipeline.analyses.patterns_train.settings import PatternClassifier
from pipeline.core.io import write_table
from pipeline.kovaleva.patterns.train import LabelledSet, load_labelled_set

FOLD_SEEDS = (43, 44, 45)
ROUND_TWO = ("today", "8x8 +all 4 layers", "+all")
PER_FOLD = (2, 4)  # networks per fold scored from each candidate's 4
SCORES = "pattern_design_seeds.csv"
COSTS = "pattern_design_seeds_cost.csv"


def run_candidate(
    labelled: LabelledSet, name: str, settings: PatternClassifier
) -> list[CrossValidated]:
    """The candidate `name`'s cross-validation (its `settings`) on every fold seed."""
    runs = []
    for seed in FOLD_SEEDS:
        runs.append(cross_validate(labelled, settings, seed))
        print(f"{name}, fold seed {seed}: {runs[-1].wall_s:.0f} s", flush=True)
    return runs


def main() -> None:
    args = record_parser(__doc__, figure=False).parse_args()
    if args.table:
        print(seeds_table())
        return
    started = time.perf_counter()
    torch.set_num_threads(1)
    labelled = load_labelled_set(label_folders())
    base = conf_settings()
    today = candidate_settings(base, "today")
    runs = {"today": run_candidate(labelled, "today", today)}
    reference = [run.predicted[TODAY["cv_ensemble"]] for run in runs["today"]]
    rows, cost_rows = [], []
    maps = len(labelled.maps)
    for name in ROUND_TWO:
        settings = candidate_settings(base, name)
        load = load_average()
        if name not in runs:
            runs[name] = run_candidate(labelled, name, settings)
        probe_today, probe_mine = interleaved_ratio(labelled, today, settings)
        wall = sum(run.wall_s for run in runs[name])
        for k in PER_FOLD:
            passes = stage_network_map_epochs(settings, maps, k) / stage_network_map_epochs(
                today, maps, TODAY["cv_ensemble"]
            )
            ratio = probe_mine / probe_today
            cost_rows.append((name, k, wall, ratio, ratio * passes, load))
            for subset, where in subsets(labelled).items():
                mine = [run.predicted[k][where] for run in runs[name]]
                theirs = [r[where] for r in reference]
                for score in score_rows(
                    labelled.labels[where],
                    mine,
                    theirs,
                    labelled.groups[where],
                    args.resamples,
                ):
                    rows.append((name, k, subset, *score))
        write_outputs(rows, cost_rows, labelled.folders)  # after each: a cut-off keeps them
    print(f"{time.perf_counter() - started:.0f} s in all")


def write_outputs(rows: list[tuple], cost_rows: list[tuple], folders: tuple[str, ...]) -> None:
    """The score and cost tables, and the rule's choice so far."""
    table = pd.DataFrame(rows, columns=SCORE_COLUMNS)
    cost = pd.DataFrame(
        cost_rows,
        columns=["candidate", "cv_ensemble", "cv_wall_s", "probe_ratio", "stage_ratio", "load"],
    )
    write_table(RECORDS / SCORES, table.round(4))
    write_table(RECORDS / COSTS, cost.round(4))
    print(seeds_table(), flush=True)
    print(chosen(table, cost, folders))


def chosen(table: pd.DataFrame, cost: pd.DataFrame, folders: tuple[str, ...]) -> str:
    """The rule's choice, in words."""
    ok = passes_rule(table, folders).rename("passes").reset_index()
    passing = cost.merge(ok, on=["candidate", "cv_ensemble"])
    passing = passing[passing["passes"]].sort_values("stage_ratio")
    if passing.empty:
        return "no candidate passes the rule: today's design stays"
    best = passing.iloc[0]
    return f"chosen: {best['candidate']} with {best['cv_ensemble']} networks per fold"


def seeds_table(folder: Path = RECORDS) -> str:
    """The kept records as Markdown: per candidate, networks per fold and model, the stage's
    cost against today's, accuracy and kappa (mean over the fold seeds) with the lower bound
    of their paired difference, vertical+diagonal recall and vertical's F1 with their paired
    differences, each class's recall, the boundary round's accuracy, and the rule."""
    table = pd.read_csv(folder / SCORES)
    cost = pd.read_csv(folder / COSTS).set_index(["candidate", "cv_ensemble"])
    folders = tuple(s for s in table["subset"].unique() if s != "all" and "boundary" not in s)
    rule = passes_rule(table, folders)
    head = [
        "design", "per fold", "model", "cost vs today", "accuracy (diff low)", "kappa (diff low)",
        "recall V+D (diff)", "F1 V (diff)", "recall V / D / B / H", "boundary round accuracy",
        "rule",
    ]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]

    def row(rows: pd.DataFrame, subset: str, score: str) -> pd.Series | None:
        found = rows[(rows["subset"] == subset) & (rows["score"] == score)]
        return None if found.empty else found.iloc[0]

    def low(r: pd.Series) -> str:
        return f"{r.estimate:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}] ({r.diff_low:+.3f})"

    for (name, k), rows in table.groupby(["candidate", "cv_ensemble"], sort=False):
        for subset in folders:
            vd, f1 = row(rows, subset, "recall_vertical+diagonal"), row(rows, subset, "f1_vertical")
            recalls = [
                row(rows, subset, f"recall_{c}")
                for c in ("vertical", "diagonal", "block", "heterogeneous")
            ]
            boundary = row(rows, f"{subset} boundary round", "accuracy")
            values = [
                name, str(k), subset, f"{cost.loc[(name, k), 'stage_ratio']:.2f}",
                low(row(rows, subset, "accuracy")), low(row(rows, subset, "kappa")),
                f"{vd.estimate:.3f} ({vd['diff']:+.3f})", f"{f1.estimate:.3f} ({f1['diff']:+.3f})",
                " / ".join("-" if r is None else f"{r.estimate:.3f}" for r in recalls),
                "" if boundary is None else low(boundary),
                "passes" if rule[(name, k)] else "",
            ]  # fmt: skip
            lines.append("| " + " | ".join(values) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
