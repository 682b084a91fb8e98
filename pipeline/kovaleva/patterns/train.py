"""The pattern CNN trained on the visual labels: grouped cross-validation, then the final fit.

`train_classifier` is the patterns_train stage's entry point. The labelled set is the maps of
one or more label folders (one per model: `patterns.labels_from`), each folder's labels
resolved to one per map (see `labels.resolve`); a map's id is `<folder>/<id in the folder>`.
Cross-validation folds are grouped by input example (folder, task, example id), so no two
heads of one example sit on both sides of a split, and stratified by label. The out-of-fold
predictions are scored against the visual labels (accuracy, Cohen's kappa, macro-F1, F1 per
class), each with a bootstrap interval over input examples, on all maps and on each folder's
maps; the threshold rule is scored on the same maps as a baseline. Each class's recall is
also given per folder and labelling round (`recall_by_round`), so that a round drawn near the
classifier's boundaries is seen apart from the rounds before it.
Each fold trains an ensemble of `cv_ensemble` networks (seeds seed, seed + 1, ...; their
probabilities averaged): the classifier itself when `cv_ensemble` = `ensemble`, a smaller,
cheaper one otherwise. The classifier is the ensemble of `ensemble` networks trained on every
labelled map; a second ensemble with the next seeds measures how much the shares depend on
the classifier's seeds (patterns_apply). Block is never predicted for a one-sentence input
(`cnn.predict`). The networks are independent: `workers` processes train them side by side,
one network each at a time, on one thread with the CPU's own kernels; a network's weights
depend on its seed and rows alone, not on `workers`, and repeat byte for byte on one machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from sklearn.model_selection import StratifiedGroupKFold
from tqdm import tqdm

from pipeline.analyses.patterns_train.settings import PatternClassifier, PatternRule
from pipeline.core.errors import PipelineError
from pipeline.core.stats import bootstrap_interval
from pipeline.core.workers import shared_data, worker_pool
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.agreement import annotator_agreement
from pipeline.kovaleva.patterns.cnn import PatternCNN, inputs_of, pairs_of, predict, train
from pipeline.kovaleva.patterns.features import map_features, special_mask
from pipeline.kovaleva.patterns.heuristic import heuristic_labels
from pipeline.kovaleva.patterns.labels import (
    MAPS_FILE,
    SAMPLE_FILE,
    read_labels,
    read_sample,
    resolve,
)
from pipeline.kovaleva.patterns.mapsets import LabelledMap, read_map_set
from pipeline.kovaleva.patterns.roles import sentence_ids
from pipeline.kovaleva.patterns.scores import (
    confusion_scores,
    example_confusions,
    resampled_confusions,
    score_names,
)


@dataclass(frozen=True)
class LabelledSet:
    """The resolved visual labels with their maps, in one order."""

    origin: pd.DataFrame  # one row per map: labels_from, sample.csv's columns (map_id as
    # <folder>/<id>), label, num_labels, agreed
    maps: list[LabelledMap]
    all_labels: pd.DataFrame  # every label, one row per (map, annotator), with labels_from
    folders: tuple[str, ...]  # the label folders' names (the models whose maps these are)

    @property
    def labels(self) -> np.ndarray:
        return self.origin["label"].to_numpy()

    @property
    def map_set(self) -> dict[str, LabelledMap]:
        return dict(zip(self.origin["map_id"], self.maps, strict=True))

    @property
    def groups(self) -> np.ndarray:
        """The input example of each map: maps of one example share a group."""
        origin = self.origin
        return (
            origin["labels_from"] + ":" + origin["task"] + ":" + origin["example_id"].astype(str)
        ).to_numpy()


@dataclass(frozen=True)
class TrainedClassifier:
    ensembles: list[list[PatternCNN]]  # the classifier, then the seed-stability ensemble
    labelled: LabelledSet
    out_of_fold: pd.DataFrame  # map_id, labels_from, round, variant, task, example_id,
    # agreed, visual, cnn, confidence, rule
    scores: pd.DataFrame  # labels_from (a folder, or 'all'), method, score, estimate, ci_low,
    # ci_high
    agreement: pd.DataFrame  # labels_from, primary, other, pairs, agreement, kappa
    metrics: dict[str, float]

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables by file stem; `confusion` is map_id, actual (visual), predicted (cnn)."""
        confusion = self.out_of_fold.rename(columns={"visual": "actual", "cnn": "predicted"})
        return {
            "scores": self.scores,
            "agreement": self.agreement,
            "cross_validation": self.out_of_fold,
            "recall_by_round": recall_by_round(self.out_of_fold),
            "confusion": confusion[["map_id", "actual", "predicted"]],
        }


def load_folder(folder: Path) -> tuple[pd.DataFrame, dict[str, LabelledMap], pd.DataFrame]:
    """One label folder: its resolved labels with their origin, its maps and every label, map
    ids as in the folder."""
    maps = read_map_set(folder / MAPS_FILE)
    sample = read_sample(folder / SAMPLE_FILE)
    unknown = sorted(set(sample["map_id"]) - set(maps))
    if unknown:
        raise PipelineError(
            f"{folder}: {SAMPLE_FILE} names map '{unknown[0]}' missing from {MAPS_FILE}"
        )
    all_labels = read_labels(folder, maps)
    return sample.merge(resolve(all_labels), on="map_id", how="inner"), maps, all_labels


def load_labelled_set(folders: Sequence[Path]) -> LabelledSet:
    """The maps of the label `folders`, one resolved label each (see `labels`), ids
    `<folder>/<id>`."""
    names = [folder.name for folder in folders]
    if len(set(names)) < len(names):
        raise PipelineError(f"label folders {names}: name each folder once")
    origins, maps, labels = [], [], []
    for folder in folders:
        origin, folder_maps, all_labels = load_folder(folder)
        maps += [folder_maps[m] for m in origin["map_id"]]
        prefix = folder.name + "/"
        origins.append(origin.assign(map_id=prefix + origin["map_id"]))
        labels.append(all_labels.assign(map_id=prefix + all_labels["map_id"]))
        origins[-1].insert(0, "labels_from", folder.name)
        labels[-1].insert(0, "labels_from", folder.name)
    return LabelledSet(
        pd.concat(origins, ignore_index=True),
        maps,
        pd.concat(labels, ignore_index=True),
        tuple(names),
    )


def rule_labels(maps: Sequence[LabelledMap], thresholds: PatternRule) -> np.ndarray:
    """The threshold rule's class of each map, from its weights and word pieces only."""
    rows = []
    for entry in maps:
        special = special_mask(entry.tokens)
        rows.append(map_features(entry.weights[None], special, sentence_ids(entry.tokens)))
    return heuristic_labels(pd.concat(rows, ignore_index=True), thresholds)


def fit(
    inputs: torch.Tensor, labels: np.ndarray, settings: PatternClassifier, seed: int
) -> PatternCNN:
    """One network trained (`cnn.train`) on inputs [N, C, S, S] with class names [N], its
    weights initialised after `torch.manual_seed(seed)`."""
    targets = torch.tensor([CLASSES.index(c) for c in labels])  # [N]
    torch.manual_seed(seed)
    model = PatternCNN(settings.channels, settings.dropout, inputs.shape[1])
    train(model, inputs, targets, settings, seed)
    return model


@dataclass(frozen=True)
class Job:
    """One network to train: on which labelled rows, with which seed."""

    rows: np.ndarray  # int [M]: rows of the inputs
    seed: int


def schedule(jobs: Sequence[Job]) -> list[int]:
    """The order in which the workers take `jobs`: those on most rows first (stable), so the
    workers finish nearly together rather than one of them a large network after the others."""
    return sorted(range(len(jobs)), key=lambda i: -len(jobs[i].rows))


def _fit_shared(job: Job) -> dict[str, torch.Tensor]:
    """In a worker: one job's network (`fit`) on the inputs, labels and settings its pool
    shares, trained, as its weights."""
    inputs, labels, settings = shared_data()
    return fit(inputs[job.rows], labels[job.rows], settings, job.seed).state_dict()


def fit_all(
    inputs: torch.Tensor,
    labels: np.ndarray,
    settings: PatternClassifier,
    jobs: Sequence[Job],
    workers: int,
) -> list[PatternCNN]:
    """The networks of `jobs`, in order, each trained alone (`fit`) by one of `workers`
    spawned processes of one thread, in the order of `schedule`. A network's weights depend
    neither on `workers` nor on the other jobs."""
    planned = schedule(jobs)
    weights: dict[int, dict[str, torch.Tensor]] = {}
    with worker_pool(max(workers, 1), (inputs, labels, settings)) as pool:
        futures = [pool.submit(_fit_shared, jobs[i]) for i in planned]
        for i, future in zip(
            planned, tqdm(futures, desc="train pattern CNNs", leave=False), strict=True
        ):
            weights[i] = future.result()
    networks = []
    for i in range(len(jobs)):
        networks.append(PatternCNN(settings.channels, settings.dropout, inputs.shape[1]))
        networks[-1].load_state_dict(weights[i])
    return networks


def ensemble_jobs(rows: np.ndarray, size: int, first_seed: int) -> list[Job]:
    """An ensemble of `size` networks on `rows`, seeds first_seed, first_seed + 1, ..."""
    return [Job(rows, first_seed + i) for i in range(size)]


def held_out_predictions(
    inputs: torch.Tensor,
    pairs: torch.Tensor,
    splits: Sequence[tuple[np.ndarray, np.ndarray]],
    ensembles: Sequence[Sequence[PatternCNN]],
) -> tuple[np.ndarray, np.ndarray]:
    """Class names [N] and confidences [N] of each map, from the ensemble of the fold that held
    it out (`ensembles[f]` trained without `splits[f]`'s test rows)."""
    predicted = np.empty(len(inputs), dtype=object)
    confidence = np.empty(len(inputs))
    for (_, test_rows), networks in zip(splits, ensembles, strict=True):
        probs = predict(networks, inputs[test_rows], pairs[test_rows])  # [T, C]
        predicted[test_rows] = np.asarray(CLASSES)[probs.argmax(-1).numpy()]
        confidence[test_rows] = probs.max(-1).values.numpy()
    return predicted.astype(str), confidence


def score_table(
    true: np.ndarray,
    by_method: dict[str, np.ndarray],
    groups: np.ndarray,
    n_resamples: int,
    seed: int,
) -> pd.DataFrame:
    """method, score, estimate, ci_low, ci_high: each method's labels against `true`, with
    95% bootstrap intervals that resample input examples (`groups`), since the maps of one
    example are not independent. Every resample's scores come from its confusion matrix
    (`scores`); each method is resampled alike (one seed)."""
    codes = pd.factorize(groups)[0]  # [N]: input example, 0..G-1
    names = score_names(true)
    rows = []
    for method, predicted in by_method.items():
        confusions = example_confusions(true, predicted, codes)  # [G, C, C]

        def on_examples(picked: np.ndarray, confusions=confusions) -> np.ndarray:
            """Drawn examples [..., G] -> scores [..., K]."""
            return confusion_scores(resampled_confusions(confusions, picked), names)

        intervals = bootstrap_interval(
            on_examples,
            np.arange(len(confusions)),
            n_resamples=n_resamples,
            seed=seed,
            vectorized=True,
        )
        rows += [
            (method, name, i.estimate, i.low, i.high)
            for name, i in zip(names, intervals, strict=True)
        ]
    return pd.DataFrame(rows, columns=["method", "score", "estimate", "ci_low", "ci_high"])


def train_classifier(
    folders: Sequence[Path],
    settings: PatternClassifier,
    thresholds: PatternRule,
    seed: int,
    unseen: Sequence[Path] = (),
) -> TrainedClassifier:
    """Cross-validate, score against the rule, and train the final networks on the maps of
    the label `folders` (see module). The classifier is also scored on the maps of the
    `unseen` label folders, which it never learnt from (method `cnn_unseen`: another model's
    maps)."""
    labelled = load_labelled_set(folders)
    labels = labelled.labels
    inputs = inputs_of(labelled.maps, settings.input_size, settings.input_channels)  # [N, C, S, S]
    folds = StratifiedGroupKFold(n_splits=settings.folds, shuffle=True, random_state=seed)
    splits = list(folds.split(np.zeros(len(labels)), labels, labelled.groups))
    size, per_fold = settings.ensemble, settings.cv_ensemble
    jobs = [job for rows, _ in splits for job in ensemble_jobs(rows, per_fold, seed)]
    jobs += ensemble_jobs(np.arange(len(labels)), 2 * size, seed)  # classifier, seed check
    networks = fit_all(inputs, labels, settings, jobs, settings.workers)
    final = networks[len(splits) * per_fold :]
    ensembles = [final[:size], final[size:]]
    held_out = [networks[i * per_fold : (i + 1) * per_fold] for i in range(len(splits))]
    pairs = pairs_of(labelled.maps)  # [N]
    predicted, confidence = held_out_predictions(inputs, pairs, splits, held_out)
    rule = rule_labels(labelled.maps, thresholds)
    origin = labelled.origin
    scores = []
    for name, rows in [
        ("all", origin.index),
        *origin.groupby("labels_from", sort=False).groups.items(),
    ]:
        rows = np.asarray(rows)
        table = score_table(
            labels[rows],
            {"cnn": predicted[rows], "rule": rule[rows]},
            labelled.groups[rows],
            settings.bootstrap_resamples,
            seed,
        )
        table.insert(0, "labels_from", name)
        scores.append(table)
    for folder in unseen:
        other = load_labelled_set([folder])
        probs = predict(
            ensembles[0],
            inputs_of(other.maps, settings.input_size, settings.input_channels),
            pairs_of(other.maps),
        )
        table = score_table(
            other.labels,
            {
                "cnn_unseen": np.asarray(CLASSES)[probs.argmax(-1).numpy()],
                "rule": rule_labels(other.maps, thresholds),
            },
            other.groups,
            settings.bootstrap_resamples,
            seed,
        )
        table.insert(0, "labels_from", folder.name)
        scores.append(table)
    out_of_fold = origin[
        ["map_id", "labels_from", "round", "variant", "task", "example_id", "agreed"]
    ].assign(visual=labels, cnn=predicted, confidence=confidence, rule=rule)
    agreement = pd.concat(
        [
            annotator_agreement(group).assign(labels_from=name)
            for name, group in labelled.all_labels.groupby("labels_from", sort=False)
        ],
        ignore_index=True,
    )
    agreement = agreement[["labels_from", *agreement.columns[:-1]]]
    all_scores = pd.concat(scores, ignore_index=True)
    return TrainedClassifier(
        ensembles,
        labelled,
        out_of_fold,
        all_scores,
        agreement,
        training_metrics(labelled, all_scores, agreement),
    )


def recall_by_round(out_of_fold: pd.DataFrame) -> pd.DataFrame:
    """labels_from, round, class, labelled, recalled, recall: per label folder and labelling
    round, each class's maps by their visual label and how many of them the cross-validated
    CNN called that class; class `all` counts every map (its recall is the accuracy)."""
    rows = []
    for (folder, round_), part in out_of_fold.groupby(["labels_from", "round"], sort=False):
        hits = part["visual"] == part["cnn"]
        for name in [*CLASSES, "all"]:
            mine = part["visual"] == name if name != "all" else np.ones(len(part), dtype=bool)
            labelled, recalled = int(mine.sum()), int((hits & mine).sum())
            if labelled:
                rows.append((folder, round_, name, labelled, recalled, recalled / labelled))
    return pd.DataFrame(
        rows, columns=["labels_from", "round", "class", "labelled", "recalled", "recall"]
    )


def training_metrics(
    labelled: LabelledSet, scores: pd.DataFrame, agreement: pd.DataFrame
) -> dict[str, float]:
    """Flat metrics: label counts, each folder's annotators' pooled agreement
    (`annotators.<folder>.<score>`), every score with its interval on all maps
    (`<method>.<score>`, `..._ci_low`, `..._ci_high`) and on each folder's maps
    (`<method>.<folder>.<score>`...)."""
    counts = labelled.origin["label"].value_counts()
    metrics: dict[str, float] = {f"labels.{c}": int(counts.get(c, 0)) for c in CLASSES}
    metrics.update(
        {
            "labels.maps": len(labelled.origin),
            "labels.labels": len(labelled.all_labels),
            "labels.annotators": labelled.all_labels["annotator"].nunique(),
            "labels.maps_with_several_labels": int((labelled.origin["num_labels"] > 1).sum()),
        }
    )
    for row in agreement[agreement["other"] == "any"].itertuples(index=False):
        metrics.update(
            {
                f"annotators.{row.labels_from}.pairs": int(row.pairs),
                f"annotators.{row.labels_from}.agreement": round(float(row.agreement), 4),
                f"annotators.{row.labels_from}.kappa": round(float(row.kappa), 4),
            }
        )
    for row in scores.itertuples(index=False):
        where = "" if row.labels_from == "all" else f"{row.labels_from}."
        key = f"{row.method}.{where}{row.score}"
        metrics.update(
            {
                key: round(row.estimate, 4),
                f"{key}_ci_low": round(row.ci_low, 4),
                f"{key}_ci_high": round(row.ci_high, 4),
            }
        )
    return metrics


def training_summary(trained: TrainedClassifier, model: str) -> str:
    """What the classifier rests on, in sentences, for the report."""
    m, labelled = trained.metrics, trained.labelled

    def scored(method: str, score: str) -> str:
        key = f"{method}.{score}"
        return f"{m[key]:.3f} [{m[key + '_ci_low']:.3f}, {m[key + '_ci_high']:.3f}]"

    counts = ", ".join(f"{c} {m[f'labels.{c}']}" for c in CLASSES)
    folders = labelled.folders
    readmes = " and ".join(f"data/annotations/{f}/README.md" for f in folders)
    text = (
        f"The pattern classifier learnt from {m['labels.maps']} maps of "
        f"{' and '.join(folders)} labelled by eye ({m['labels.labels']} labels by "
        f"{m['labels.annotators']} annotators; resolved labels: {counts}). Each annotator was "
        "an AI assistant (a vision-language model) shown only the labelling guide and sheets "
        f"of rendered maps, no numbers and no other label ({readmes})."
    )
    for folder in folders:
        key = f"annotators.{folder}"
        if f"{key}.pairs" in m:
            text += (
                f" On the {m[f'{key}.pairs']} pairs of labels of one map of {folder} by the "
                f"primary and another annotator, the annotators agree on "
                f"{m[f'{key}.agreement']:.3f} (Cohen's kappa {m[f'{key}.kappa']:.3f})."
            )
    text += (
        f" Cross-validated with folds grouped by example, the CNN agrees with the visual "
        f"labels on {scored('cnn', 'accuracy')} of maps (kappa {scored('cnn', 'kappa')}, "
        f"macro-F1 {scored('cnn', 'macro_f1')}; 95% bootstrap intervals); the threshold "
        f"rule, as a baseline, on {scored('rule', 'accuracy')} (kappa {scored('rule', 'kappa')})."
    )
    if len(folders) > 1:
        text += (
            " On each model's maps: "
            + "; ".join(
                f"{f} {scored('cnn', f'{f}.accuracy')} (kappa {scored('cnn', f'{f}.kappa')})"
                for f in folders
            )
            + "."
        )
    for folder in sorted({k.split(".")[1] for k in m if k.startswith("cnn_unseen.")}):
        text += (
            f" The classifier never saw {folder}'s labelled maps; on them it agrees with the "
            f"visual labels on {scored('cnn_unseen', f'{folder}.accuracy')} "
            f"(kappa {scored('cnn_unseen', f'{folder}.kappa')})."
        )
    if model not in folders:
        text += (
            f" {model}'s own maps have no visual labels: its shares rest on a classifier "
            f"trained on the maps of {' and '.join(folders)}."
        )
    return text
