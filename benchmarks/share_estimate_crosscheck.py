"""The shares' estimator (`pipeline.kovaleva.patterns.share_estimate`) checked against
samplics' stratified Taylor estimator, on two synthetic tasks.

samplics is not a dependency of the project: run this with a Python of its own that has it
(checked with samplics 0.6.1), from the repository root:

    python -m venv <dir> && <dir>/bin/pip install samplics omegaconf
    <dir>/bin/python -m benchmarks.share_estimate_crosscheck

The synthetic run: two tasks of 64 dev examples x 72 maps, each example's call shares drawn
around its task's (Dirichlet), a round drawn from both tasks' maps pooled as patterns_round
draws it (`design.draw_by_call`), and each drawn map's label by eye drawn from a fixed
P(type | call). Per task and type it prints three ratios, ours / samplics:
- the point estimate: samplics' proportion of the type among the labelled maps, stratified
  by call, each map weighted W_ch / n_h (so that a stratum weighs the task's share of its
  call): the same sum_h W_ch P(k | h);
- the labelled maps' standard error: ours with the task's maps as one example, so that W is
  the same in every resample, against samplics' Taylor standard error of that estimate
  (each labelled map its own unit, no finite-population correction; its n_h / (n_h - 1)
  puts the expected ratio a little under 1, by less than the resamples' own noise);
- the whole standard error: ours against the root of the sum of samplics' two parts, the
  labelled maps' above and the examples' (the mean over the task's maps of P(k | call),
  P held at the estimate, examples as clusters), which are independent.
The standard errors are the bootstrap resamples' standard deviation.
"""

from __future__ import annotations

import argparse
import importlib
import warnings
from types import ModuleType

import numpy as np
import pandas as pd

from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.design import CALL, draw_by_call
from pipeline.kovaleva.patterns.share_estimate import estimate_shares

EXAMPLES, HEADS, CONCENTRATION, RESAMPLES, SEED = 64, 72, 40.0, 4000, 11
TASKS = {  # each task's expected call shares (CLASSES order)
    "one_sentence": [0.72, 0.03, 0.11, 0.0, 0.14],
    "two_sentences": [0.60, 0.07, 0.14, 0.005, 0.185],
}
P_TRUE = np.array(  # rows: calls, columns: types (CLASSES order)
    [
        [0.80, 0.006, 0.096, 0.008, 0.09],
        [0.01, 0.82, 0.10, 0.01, 0.06],
        [0.11, 0.11, 0.69, 0.02, 0.07],
        [0.21, 0.03, 0.15, 0.34, 0.27],
        [0.20, 0.12, 0.10, 0.03, 0.55],
    ]
)
SIZES = dict(zip(CLASSES, (120, 20, 30, 13, 57), strict=True))


def synthetic_round(rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The run's predictions (task, variant, example_id, label) and the labelled round
    (task, variant, call, label)."""
    frames = []
    for task, shares in TASKS.items():
        examples = rng.dirichlet(CONCENTRATION * np.asarray(shares) + 1e-9, size=EXAMPLES)
        calls = np.concatenate(
            [np.repeat(np.arange(len(CLASSES)), c) for c in rng.multinomial(HEADS, examples)]
        )
        frames.append(
            pd.DataFrame(
                {
                    "task": task,
                    "variant": "finetuned",
                    "example_id": np.repeat(np.arange(EXAMPLES), HEADS),
                    CALL: np.asarray(CLASSES)[calls],
                }
            )
        )
    predictions = pd.concat(frames, ignore_index=True)
    available = predictions[CALL].value_counts()
    sizes = {c: min(n, int(available.get(c, 0))) for c, n in SIZES.items()}
    drawn = draw_by_call(predictions, sizes, seed=SEED)
    types = [rng.choice(CLASSES, p=P_TRUE[CLASSES.index(c)]) for c in drawn[CALL]]
    return predictions, drawn.assign(label=types)


def bootstrap_se(predictions: pd.DataFrame, labelled: pd.DataFrame) -> pd.DataFrame:
    """Our estimate and its resamples' standard deviation per (task, type)."""
    found = estimate_shares(predictions, labelled, n_resamples=RESAMPLES, seed=SEED)
    rows = [
        (task, kind, found.estimate[c, k], found.draws[:, c, k].std(ddof=1))
        for c, (task, _) in enumerate(found.cells)
        for k, kind in enumerate(CLASSES)
    ]
    return pd.DataFrame(rows, columns=["task", "type", "share", "se"]).set_index(["task", "type"])


def examples_se(samplics: ModuleType, maps: pd.DataFrame, p_type: pd.Series) -> float:
    """samplics' standard error of the mean of P(type | call) over a task's maps, examples as
    clusters (0 where no map can be of the type)."""
    values = maps[CALL].map(p_type).to_numpy()
    if not values.any():
        return 0.0
    mean = samplics.TaylorEstimator(samplics.PopParam.mean)
    mean.estimate(y=values, psu=maps["example_id"].to_numpy())
    return float(mean.stderror)


def samplics_parts(
    samplics: ModuleType, predictions: pd.DataFrame, labelled: pd.DataFrame
) -> pd.DataFrame:
    """samplics' estimate and the two parts of its standard error per (task, type)."""
    n = labelled["call"].value_counts()
    p = pd.crosstab(labelled["call"], labelled["label"]).div(n, axis=0)
    p = p.reindex(index=list(CLASSES), columns=list(CLASSES), fill_value=0.0)
    rows = []
    for task, maps in predictions.groupby("task"):
        w = maps[CALL].value_counts(normalize=True)
        weights = labelled["call"].map(w).fillna(0.0) / labelled["call"].map(n)
        labels = samplics.TaylorEstimator(samplics.PopParam.prop)
        labels.estimate(y=labelled["label"].to_numpy(), samp_weight=weights.to_numpy(),
                        stratum=labelled["call"].to_numpy())  # fmt: skip
        for kind in CLASSES:
            spread = examples_se(samplics, maps, p[kind])
            rows.append((task, kind, labels.point_est.get(kind, 0.0),
                         labels.stderror.get(kind, 0.0), spread))  # fmt: skip
    return pd.DataFrame(
        rows, columns=["task", "type", "share", "se_labels", "se_examples"]
    ).set_index(["task", "type"])


def imported_samplics() -> ModuleType:
    """samplics, or a one-line exit saying how to get it (it is not a project dependency)."""
    try:
        return importlib.import_module("samplics")
    except ModuleNotFoundError:
        raise SystemExit(
            "samplics is not installed: run this with a Python of its own that has it "
            "(python -m venv <dir> && <dir>/bin/pip install samplics omegaconf)"
        ) from None


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    samplics = imported_samplics()
    warnings.simplefilter("ignore", FutureWarning)  # samplics announces its successor
    rng = np.random.default_rng(SEED)
    predictions, labelled = synthetic_round(rng)
    ours = bootstrap_se(predictions, labelled)
    ours_labels = bootstrap_se(predictions.assign(example_id=0), labelled)
    theirs = samplics_parts(samplics, predictions, labelled)
    table = pd.DataFrame(
        {
            "share": ours["share"],
            "point": ours["share"] / theirs["share"],
            "se_labels": ours_labels["se"] / theirs["se_labels"],
            "se_total": ours["se"] / np.hypot(theirs["se_labels"], theirs["se_examples"]),
        }
    )
    print(f"ours / samplics ({RESAMPLES} resamples; '-' where the share is 0):")
    print(table.round(4).to_string(na_rep="-"))
    gap = (ours["share"] - theirs["share"]).abs().max()
    print(f"largest |ours - samplics| of a point estimate: {gap:.1e}")


if __name__ == "__main__":
    main()
