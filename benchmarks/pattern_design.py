"""The pattern CNN's design study: candidates on the quality/cost frontier, by a stated plan.

    python -m benchmarks.pattern_design [--only NAME ...] [--resamples 1000]
    python -m benchmarks.pattern_design --table    # the kept records as Markdown
    python -m benchmarks.pattern_design --figure   # their figure, drawn again

writes benchmarks/records/pattern_design.csv (every score of every candidate),
benchmarks/records/pattern_design_cost.csv (its seconds) and
benchmarks/records/pattern_design.png (quality against seconds), and prints the candidate
that the rule below chooses.

The plan (fixed before any candidate was run)
---------------------------------------------
Every candidate is scored by the stage's own cross-validation: the labelled maps of
`patterns.labels_from`, 5 folds grouped by input example and stratified by label (seed 42),
an ensemble of `cv_ensemble` networks per fold, trained as the stage trains them (2 worker
processes). Scores, each with a 95% bootstrap interval over input examples (1000 resamples):
accuracy, Cohen's kappa, vertical's F1 and each class's recall, and the paired difference
against today's design (both classifiers' out-of-fold labels on the same resampled examples),
on each model's maps, on all maps, and on each model's boundary round (`stratum`
boundary:...) apart. Each candidate's fold ensembles are also scored with only their first 1
and 2 networks (the ensemble-size axis, no extra training). The records were made when the
stage trained networks on the same rows as one batched model under CPU-independent kernels,
both since removed (docs/benchmarks.md); the second round (`pattern_design_seeds`) trains
them as the stage now does.

Cost: the wall seconds of its cross-validation on 2 cores, and the stage's training seconds
estimated from them (the same per network-map-epoch rate, times the stage's network passes:
folds plus the two final ensembles of `ensemble` networks on every map). The machine is
shared, so each candidate is also timed against today's design in one interleaved probe
(2 networks x 2 epochs on every map, one thread, each design twice, alternating, the faster
of each kept), whose CPU-seconds ratio is the cost figure that other load does not bias; the
load average is recorded beside each.

Candidates, one axis at a time from today's design, run cheapest first (the machine is 2
shared cores: the channel groups are compared at 8 x 8, where a candidate costs a third):
 1. today: 16 x 16, channels weights+contrast+roles (5), widths 8-8-16-16-32-32-64-64, 30
    epochs, 4 networks per fold;
 2. 8x8: today's channels at 8 x 8, 6 layers (8-8-16-16-32-32: the input size axis);
 3. 8x8 +all: with every full-resolution group: band (the diagonal band), plain (the map
    without its special columns) and masses (the nine full-resolution sums as planes);
 4. 8x8 +band+plain and 5. 8x8 +masses: each kind of full-resolution channel alone;
 6. 8x8 +all half width (4-4-8-8-16-16) and 7. 8x8 +all 4 layers (16-16-32-32): width, depth;
 8. 8x8 +all 15 epochs (averaging the last 5) and 9. 8x8 +all 10 epochs (the last 4);
10. +all: every group at 16 x 16 (does the full-resolution input still need 16 x 16?);
11. +all 15 epochs at 16 x 16;
12. +all half width at 16 x 16 (4-4-8-8-16-16-32-32).
The final classifier and the seed-check ensemble stay at 12 networks each: the seed-check
ensemble feeds `seed_stability`, which this study cannot measure (it needs the attention
stores), and an ensemble of 12 was what kept its change near the 0.02 goal.

The rule (fixed before any candidate was run)
---------------------------------------------
Among the candidates and their fold-ensemble sizes (1, 2, 4), choose the one whose stage
training costs least against today's (`stage_ratio`: the interleaved probe's ratio times the
ratio of network passes, which the load of other work does not bias) such that, on each
model's maps (minilm_l6 and mpnet_base):
(a) the lower bound of the paired accuracy difference against today's (4 networks per fold)
is >= -0.02, and so is the kappa difference's; (b) vertical+diagonal recall is higher than
today's; (c) vertical's F1 is not lower than today's. Fold-ensemble size changes only the
cross-validation: the chosen size becomes `cv_ensemble`. If no candidate passes, today's
design stays and the table says by how much each candidate missed.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from omegaconf import OmegaConf
from sklearn.model_selection import StratifiedGroupKFold

from pipeline.analyses.patterns_train.settings import PatternClassifier
from pipeline.core.config import CONF_DIR
from pipeline.core.io import atomic_path, write_table
from pipeline.core.stats import bootstrap_interval
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.cnn import inputs_of, pairs_of
from pipeline.kovaleva.patterns.scores import example_confusions, resampled_confusions
from pipeline.kovaleva.patterns.train import (
    LabelledSet,
    ensemble_jobs,
    fit,
    fit_all,
    held_out_predictions,
    load_labelled_set,
)

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "benchmarks" / "records"
SEED = 42
ORIGINAL = ["weights", "contrast", "roles"]
ALL = [*ORIGINAL, "band", "plain", "masses"]
TODAY = {
    "input_size": 16,
    "input_channels": ORIGINAL,
    "channels": [8, 8, 16, 16, 32, 32, 64, 64],
    "epochs": 30,
    "average_last": 10,
    "cv_ensemble": 4,
    "ensemble": 12,
}
SIX = [8, 8, 16, 16, 32, 32]
CANDIDATES: dict[str, dict] = {
    "today": {},
    "8x8": {"input_size": 8, "channels": SIX},
    "8x8 +all": {"input_size": 8, "channels": SIX, "input_channels": ALL},
    "8x8 +band+plain": {
        "input_size": 8, "channels": SIX, "input_channels": [*ORIGINAL, "band", "plain"]
    },
    "8x8 +masses": {
        "input_size": 8, "channels": SIX, "input_channels": [*ORIGINAL, "masses"]
    },
    "8x8 +all half width": {
        "input_size": 8, "channels": [4, 4, 8, 8, 16, 16], "input_channels": ALL
    },
    "8x8 +all 4 layers": {"input_size": 8, "channels": [16, 16, 32, 32], "input_channels": ALL},
    "8x8 +all 15 epochs": {
        "input_size": 8, "channels": SIX, "input_channels": ALL, "epochs": 15, "average_last": 5
    },
    "8x8 +all 10 epochs": {
        "input_size": 8, "channels": SIX, "input_channels": ALL, "epochs": 10, "average_last": 4
    },
    "+all": {"input_channels": ALL},
    "+all 15 epochs": {"input_channels": ALL, "epochs": 15, "average_last": 5},
    "+all half width": {"input_channels": ALL, "channels": [4, 4, 8, 8, 16, 16, 32, 32]},
}  # fmt: skip
ENSEMBLE_SIZES = (1, 2, 4)  # networks per fold scored from each candidate's 4
BOUNDARY = "boundary:"
SCORE_COLUMNS = [
    "candidate",
    "cv_ensemble",
    "subset",
    "score",
    "estimate",
    "ci_low",
    "ci_high",
    "diff",
    "diff_low",
    "diff_high",
]  # the score records' columns: a candidate's score per subset, and its paired difference


def candidate_settings(base: PatternClassifier, name: str) -> PatternClassifier:
    """Today's design with the candidate's changes, trained by 2 workers."""
    return replace(base, **{**TODAY, **CANDIDATES[name]}, workers=2)


def conf_group(key: str, schema: type):
    """conf/patterns/default.yaml's group `key`, typed by `schema`."""
    raw = OmegaConf.load(CONF_DIR / "patterns" / "default.yaml")[key]
    return OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(schema), raw))


def conf_settings() -> PatternClassifier:
    return conf_group("classifier", PatternClassifier)


def load_average() -> float:
    """The 1-minute load average."""
    return os.getloadavg()[0]


@dataclass(frozen=True)
class CrossValidated:
    predicted: dict[int, np.ndarray]  # networks per fold -> out-of-fold class names [N]
    wall_s: float
    network_map_epochs: int  # what the cross-validation trained


def cross_validate(
    labelled: LabelledSet, settings: PatternClassifier, seed: int = SEED
) -> CrossValidated:
    """The stage's cross-validation of `settings` (see module) with folds and networks drawn
    from `seed`, as the stage draws them from its own, timed."""
    labels = labelled.labels
    inputs = inputs_of(labelled.maps, settings.input_size, settings.input_channels)
    folds = StratifiedGroupKFold(n_splits=settings.folds, shuffle=True, random_state=seed)
    splits = list(folds.split(np.zeros(len(labels)), labels, labelled.groups))
    per_fold = settings.cv_ensemble
    jobs = [job for rows, _ in splits for job in ensemble_jobs(rows, per_fold, seed)]
    started = time.perf_counter()
    networks = fit_all(inputs, labels, settings, jobs, settings.workers)
    wall = time.perf_counter() - started
    pairs = pairs_of(labelled.maps)
    predicted = {}
    for k in ENSEMBLE_SIZES:
        held_out = [networks[i * per_fold : i * per_fold + k] for i in range(len(splits))]
        predicted[k] = held_out_predictions(inputs, pairs, splits, held_out)[0]
    passes = sum(len(rows) for rows, _ in splits) * per_fold * settings.epochs
    return CrossValidated(predicted, wall, passes)


def stage_network_map_epochs(settings: PatternClassifier, maps: int, cv_ensemble: int) -> int:
    """What the stage trains: each map in folds - 1 folds' ensembles, and the two final
    ensembles, every epoch."""
    per_epoch = cv_ensemble * (settings.folds - 1) * maps + 2 * settings.ensemble * maps
    return settings.epochs * per_epoch


def probe_seconds(inputs: torch.Tensor, labels: np.ndarray, settings: PatternClassifier) -> float:
    """CPU seconds of 2 networks x 2 epochs on every map, trained one at a time as the stage
    trains them, on one thread."""
    short = replace(settings, epochs=2, average_last=1)
    started = time.process_time()
    for i in range(2):
        fit(inputs, labels, short, SEED + i)
    return time.process_time() - started


def interleaved_ratio(labelled: LabelledSet, today: PatternClassifier, other: PatternClassifier):
    """(today's probe s, the candidate's probe s): each twice, alternating, the faster kept;
    seconds per network-map-epoch, scaled by each design's epochs (the probe runs 2)."""
    designs = (today, other)
    data = [inputs_of(labelled.maps, s.input_size, s.input_channels) for s in designs]
    times: dict[int, list[float]] = {0: [], 1: []}
    for _ in range(2):
        for i, s in enumerate(designs):
            times[i].append(probe_seconds(data[i], labelled.labels, s))
    return min(times[0]), min(times[1])


def score_rows(
    true: np.ndarray,
    predicted: Sequence[np.ndarray],
    base: Sequence[np.ndarray],
    groups: np.ndarray,
    resamples: int,
) -> list[tuple[str, float, float, float, float, float, float]]:
    """(score, estimate, low, high, difference to `base`, its low, its high) for accuracy,
    kappa, vertical's F1 and each present class's recall. `predicted` and `base` hold one
    cross-validation's out-of-fold labels [N] per fold seed: each score is the mean over the
    seeds of that seed's score. Intervals resample input examples, every seed and both
    classifiers on the same resamples."""
    codes = pd.factorize(groups)[0]
    mine = np.stack([example_confusions(true, p, codes) for p in predicted])  # [R, G, C, C]
    theirs = np.stack([example_confusions(true, b, codes) for b in base])
    present = [c for c in CLASSES if c in set(true)]
    names = ["accuracy", "kappa", "f1_vertical", *[f"recall_{c}" for c in present]]

    def scores(confusion: np.ndarray) -> np.ndarray:  # [..., C, C] -> [..., K]
        labelled = confusion.sum(-1)
        called = confusion.sum(-2)
        maps = labelled.sum(-1)
        hits = np.trace(confusion, axis1=-2, axis2=-1)
        diagonal = np.diagonal(confusion, axis1=-2, axis2=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            expected = (called * labelled).sum(-1) / maps
            kappa = (hits - expected) / (maps - expected)
            recall = diagonal / labelled
            v = CLASSES.index("vertical")
            f1_v = 2 * diagonal[..., v] / (labelled[..., v] + called[..., v])
        out = [hits / maps, kappa, f1_v] + [recall[..., CLASSES.index(c)] for c in present]
        return np.stack(out, axis=-1)

    def mean_over_seeds(confusions: np.ndarray, picked: np.ndarray) -> np.ndarray:
        return np.mean([scores(resampled_confusions(c, picked)) for c in confusions], axis=0)

    def both(picked: np.ndarray) -> np.ndarray:  # [..., G] -> [..., 2K]
        a = mean_over_seeds(mine, picked)
        b = mean_over_seeds(theirs, picked)
        return np.concatenate([a, a - b], axis=-1)

    intervals = bootstrap_interval(
        both, np.arange(mine.shape[1]), n_resamples=resamples, seed=SEED, vectorized=True
    )
    k = len(names)
    return [
        (n, i.estimate, i.low, i.high, d.estimate, d.low, d.high)
        for n, i, d in zip(names, intervals[:k], intervals[k:], strict=True)
    ]


def subsets(labelled: LabelledSet) -> dict[str, np.ndarray]:
    """Rows of each scored subset: all maps, each model's, each model's boundary round."""
    origin = labelled.origin
    out = {"all": np.arange(len(origin))}
    for folder in labelled.folders:
        mine = origin["labels_from"].to_numpy() == folder
        out[folder] = np.flatnonzero(mine)
        boundary = origin["stratum"].astype(str).str.startswith(BOUNDARY).to_numpy()
        if (mine & boundary).any():
            out[f"{folder} boundary round"] = np.flatnonzero(mine & boundary)
    return out


def passes_rule(table: pd.DataFrame, folders: tuple[str, ...]) -> pd.Series:
    """Per (candidate, networks per fold): whether the module's rule holds on every model."""

    def ok(group: pd.DataFrame) -> bool:
        def row(subset: str, score: str) -> pd.Series:
            return group[(group["subset"] == subset) & (group["score"] == score)].iloc[0]

        return all(
            row(f, "accuracy")["diff_low"] >= -0.02
            and row(f, "kappa")["diff_low"] >= -0.02
            and row(f, "recall_vertical+diagonal")["diff"] > 0
            and row(f, "f1_vertical")["diff"] >= 0
            for f in folders
        )

    return table.groupby(["candidate", "cv_ensemble"], sort=False).apply(ok)


def figure(table: pd.DataFrame, cost: pd.DataFrame, folders: tuple[str, ...], path: Path) -> None:
    """Accuracy per model against the stage's training cost relative to today's design
    (`stage_ratio`, from the interleaved probe: not biased by the load of other work)."""
    fig, axes = plt.subplots(1, len(folders), figsize=(6 * len(folders), 4.5), squeeze=False)
    for ax, folder in zip(axes[0], folders, strict=True):
        rows = table[(table["subset"] == folder) & (table["score"] == "accuracy")]
        rows = rows.merge(cost, on=["candidate", "cv_ensemble"])
        for k, marker in zip(ENSEMBLE_SIZES, "vso", strict=True):
            part = rows[rows["cv_ensemble"] == k]
            ax.errorbar(
                part["stage_ratio"],
                part["estimate"],
                yerr=[part["estimate"] - part["ci_low"], part["ci_high"] - part["estimate"]],
                fmt=marker,
                capsize=2,
                alpha=0.8,
                label=f"{k} networks per fold",
            )
        for r in rows[rows["cv_ensemble"] == max(ENSEMBLE_SIZES)].itertuples():
            ax.annotate(r.candidate, (r.stage_ratio, r.estimate), fontsize=7)
        ax.set_xscale("log")
        ax.set_xlabel("patterns_train training cost relative to today's (2 cores, CPU probe)")
        ax.set_ylabel("cross-validated accuracy (95% CI)")
        ax.set_title(folder)
        ax.legend(fontsize=7)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)


def record_parser(doc: str, figure: bool = True) -> argparse.ArgumentParser:
    """The arguments of a pattern study's benchmark: --resamples, and --table (and --figure)
    to show its kept records instead of running it; described by `doc`'s first paragraph."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--table", action="store_true", help="print the kept records' table")
    if figure:
        parser.add_argument("--figure", action="store_true", help="redraw the records' figure")
    return parser


def main() -> None:
    parser = record_parser(__doc__)
    parser.add_argument("--only", nargs="+", default=list(CANDIDATES), choices=list(CANDIDATES))
    args = parser.parse_args()
    if args.table:
        print(design_table())
        return
    if args.figure:
        table = pd.read_csv(RECORDS / "pattern_design.csv")
        cost = pd.read_csv(RECORDS / "pattern_design_cost.csv")
        figure(table, cost, tuple(f.name for f in label_folders()), RECORDS / "pattern_design.png")
        return
    torch.set_num_threads(1)
    base = conf_settings()
    labelled = load_labelled_set(label_folders())
    today = candidate_settings(base, "today")
    runs = {name: cross_validate(labelled, candidate_settings(base, name)) for name in ["today"]}
    cost_rows, rows = [], []
    reference = runs["today"].predicted[TODAY["cv_ensemble"]]
    for name in args.only:
        settings = candidate_settings(base, name)
        load = load_average()
        if name not in runs:
            runs[name] = cross_validate(labelled, settings)
        run = runs[name]
        probe_today, probe_mine = interleaved_ratio(labelled, today, settings)
        rate = run.wall_s / run.network_map_epochs  # wall s per network-map-epoch, 2 workers
        maps = len(labelled.maps)
        for k in ENSEMBLE_SIZES:
            stage = stage_network_map_epochs(settings, maps, k)
            passes = stage / stage_network_map_epochs(today, maps, TODAY["cv_ensemble"])
            ratio = probe_mine / probe_today  # per network-map-epoch, interleaved
            cost_rows.append((name, k, run.wall_s, rate * stage, ratio, ratio * passes, load))
            for subset, where in subsets(labelled).items():
                for score in score_rows(
                    labelled.labels[where],
                    [run.predicted[k][where]],
                    [reference[where]],
                    labelled.groups[where],
                    args.resamples,
                ):
                    rows.append((name, k, subset, *score))
        print(f"{name}: cross-validation {run.wall_s:.0f} s, load {load:.2f}", flush=True)
        write_outputs(rows, cost_rows, labelled.folders)  # after each: a cut-off keeps them


def write_outputs(rows: list[tuple], cost_rows: list[tuple], folders: tuple[str, ...]) -> None:
    """The score and cost tables, the figure, and the rule's choice so far."""
    table = pd.DataFrame(rows, columns=SCORE_COLUMNS)
    cost = pd.DataFrame(
        cost_rows,
        columns=[
            "candidate", "cv_ensemble", "cv_wall_s", "stage_train_s", "probe_ratio",
            "stage_ratio", "load_1min",
        ],
    )  # fmt: skip
    write_table(RECORDS / "pattern_design.csv", table.round(4))
    write_table(RECORDS / "pattern_design_cost.csv", cost.round(4))
    figure(table, cost, folders, RECORDS / "pattern_design.png")
    report(table, cost, folders)


def report(table: pd.DataFrame, cost: pd.DataFrame, folders: tuple[str, ...]) -> None:
    """Print the per-model accuracy, kappa and V+D recall beside the cost, and the choice."""
    ok = passes_rule(table, folders).rename("passes").reset_index()
    wide = cost.merge(ok, on=["candidate", "cv_ensemble"])
    for folder in folders:
        for score in ("accuracy", "kappa", "recall_vertical+diagonal", "f1_vertical"):
            part = table[(table["subset"] == folder) & (table["score"] == score)]
            wide = wide.merge(
                part[["candidate", "cv_ensemble", "estimate", "diff_low"]].rename(
                    columns={
                        "estimate": f"{folder[:5]} {score[:8]}",
                        "diff_low": f"{folder[:5]} {score[:8]} dlo",
                    }
                ),
                on=["candidate", "cv_ensemble"],
            )
    with pd.option_context("display.width", 250, "display.max_columns", 40):
        print(wide.round(3).to_string(index=False))
    chosen = wide[wide["passes"]].sort_values("stage_ratio")
    if chosen.empty:
        print("no candidate passes the rule: today's design stays")
    else:
        best = chosen.iloc[0]
        print(f"chosen: {best['candidate']} with {best['cv_ensemble']} networks per fold")


def design_table(folder: Path = RECORDS) -> str:
    """The kept records as Markdown: per candidate, networks per fold and model, the stage's
    cost against today's, accuracy and kappa with intervals and the lower bound of their
    paired difference against today's, each class's recall and vertical's F1, and whether
    the rule holds (on both models); then each model's boundary round apart."""
    table = pd.read_csv(folder / "pattern_design.csv")
    cost = pd.read_csv(folder / "pattern_design_cost.csv").set_index(["candidate", "cv_ensemble"])
    folders = tuple(s for s in table["subset"].unique() if s != "all" and BOUNDARY[:-1] not in s)
    rule = passes_rule(table, folders)
    short = {"vertical": "V", "diagonal": "D", "vertical+diagonal": "V+D", "block": "B"}
    short["heterogeneous"] = "H"
    head = [
        "design", "per fold", "model", "cost vs today", "accuracy", "diff low", "kappa",
        "diff low", *[f"recall {short[c]}" for c in CLASSES], "F1 V", "rule",
    ]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]

    def cell(rows: pd.DataFrame, score: str, interval: bool = False) -> str:
        row = rows[rows["score"] == score]
        if row.empty:
            return ""
        r = row.iloc[0]
        return (
            f"{r.estimate:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]"
            if interval
            else f"{r.estimate:.3f}"
        )

    def low(rows: pd.DataFrame, score: str) -> str:
        return f"{rows[rows['score'] == score].iloc[0]['diff_low']:+.3f}"

    for (name, k), rows in table.groupby(["candidate", "cv_ensemble"], sort=False):
        for subset in folders:
            mine = rows[rows["subset"] == subset]
            values = [
                name, str(k), subset, f"{cost.loc[(name, k), 'stage_ratio']:.2f}",
                cell(mine, "accuracy", True), low(mine, "accuracy"), cell(mine, "kappa", True),
                low(mine, "kappa"), *[cell(mine, f"recall_{c}") for c in CLASSES],
                cell(mine, "f1_vertical"), "passes" if rule[(name, k)] else "",
            ]  # fmt: skip
            lines.append("| " + " | ".join(values) + " |")
    lines += ["", "| design | per fold | " + " | ".join(f"{f}: boundary round" for f in folders)]
    lines[-1] += " |"
    lines.append("|---" * (2 + len(folders)) + "|")
    for (name, k), rows in table.groupby(["candidate", "cv_ensemble"], sort=False):
        values = [name, str(k)]
        for subset in folders:
            mine = rows[rows["subset"] == f"{subset} boundary round"]
            values.append(f"{cell(mine, 'accuracy', True)} (diff low {low(mine, 'accuracy')})")
        lines.append("| " + " | ".join(values) + " |")
    return "\n".join(lines)


def label_folders() -> list[Path]:
    """The stage's label folders (`patterns.labels_from`)."""
    names = OmegaConf.load(CONF_DIR / "patterns" / "default.yaml")["labels_from"]
    return [ROOT / "data" / "annotations" / name for name in names]


if __name__ == "__main__":
    main()
