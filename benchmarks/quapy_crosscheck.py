"""The share correction checked against QuaPy's ACC, on the committed cross-validated
predictions and the committed default run's shares.

QuaPy is not a dependency of the project: run this with a Python of its own that has it
(the record was made with QuaPy 0.2.3), from the repository root (it imports
`pipeline.claims.shares`, which needs numpy and scipy alone):

    python -m venv <dir> && <dir>/bin/pip install quapy pandas pyarrow
    <dir>/bin/python -m benchmarks.quapy_crosscheck  # writes benchmarks/records/quapy_crosscheck.md

What it compares, per task of the default run (seed 42, fine-tuned maps), for the error
rates R read off two sets of labelled maps of the task's input kind: every labelled map
(what the committed claims tables used) and the rule-stratified round alone, unweighted
(the design weights need the run's maps per rule class, `rule_maps`, which the committed
patterns_apply metrics predate):
- the point estimate: `shares.adjusted_shares` (least squares on the simplex, every type
  solved for) against QuaPy's ACC (`solver='minimize'`, SLSQP on the simplex, then clipped
  and normalised) fitted on the same labelled maps, so on the same R;
- the 95% interval of each type's share: `shares.corrected_shares` (examples resampled, each
  row of R drawn from its exact confidence distribution at its effective counts, the
  observed shares' and the classifier seed's spread; unclipped draws) against QuaPy's
  `AggregativeBootstrap` over ACC (the labelled maps resampled as independent maps, the
  task's maps resampled as independent maps; clipped estimates).
PACC needs every class's posterior for each labelled map; `cross_validation.csv` keeps only
the called type's (`confidence`), so PACC is not run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.claims.shares import DESIGN_ROUND, SHARE_RESAMPLES, adjusted_shares, corrected_shares
from pipeline.core.io import write_text

OUTPUTS = Path("outputs")
RECORD = Path("benchmarks/records/quapy_crosscheck.md")
TASKS = ("sst2", "mrpc", "rte", "stsb")
ONE_SENTENCE = ("sst2",)
CLASSES = ("vertical", "diagonal", "vertical+diagonal", "block", "heterogeneous")
SEED = 42
TRAIN_RESAMPLES = 200  # QuaPy: resamples of the labelled maps (one ACC fitted on each)
TEST_RESAMPLES = 5  # QuaPy: resamples of the task's maps per fitted ACC


def _fitted(classes: tuple[str, ...]):
    """A classifier already fitted, whose inputs are the maps' called types: what QuaPy's
    aggregative methods read `classes_` from and classify with."""
    from sklearn.base import BaseEstimator, ClassifierMixin

    class Fitted(ClassifierMixin, BaseEstimator):
        def fit(self, *_: object) -> Fitted:
            return self

        def predict(self, maps: np.ndarray) -> np.ndarray:
            return maps  # the maps come already classified

    fitted = Fitted()
    fitted.classes_ = np.array(classes)
    return fitted


def _inputs(task: str) -> tuple[tuple[str, ...], pd.DataFrame, dict, pd.DataFrame]:
    kinds = tuple(k for k in CLASSES if not (k == "block" and task in ONE_SENTENCE))
    labelled = pd.read_csv(OUTPUTS / "plots/patterns_train/cross_validation.csv")
    labelled = labelled[labelled["task"].isin(ONE_SENTENCE) == (task in ONE_SENTENCE)]
    metrics = json.loads((OUTPUTS / f"metrics/patterns_apply/seed{SEED}.json").read_text())
    shares = pd.read_csv(OUTPUTS / f"plots/patterns_apply/seed{SEED}/shares.csv")
    applied = shares[(shares["task"] == task) & (shares["variant"] == "finetuned")]
    return kinds, labelled, metrics, applied.set_index("class").loc[list(kinds)]


def _quapy(kinds, labelled: pd.DataFrame, counts: np.ndarray) -> tuple[np.ndarray, ...]:
    """QuaPy's ACC estimate on these labelled maps, its R, and two 95% intervals: its
    `AggregativeBootstrap` as the library runs it on classified maps (the task's maps
    resampled, R fixed), and its model-based bootstrap (the labelled maps resampled too, one
    ACC each). The library's model-based branch (`n_train_samples > 1`) fails in QuaPy 0.2.3
    on arrays of predictions (it calls `sampling_from_index` on them), so that branch is
    done here the way it reads: maps resampled with replacement, one ACC per resample."""
    from quapy.method.aggregative import ACC
    from quapy.method.confidence import AggregativeBootstrap, ConfidenceIntervals

    predicted, actual = labelled["cnn"].to_numpy(), labelled["visual"].to_numpy()
    acc = ACC(_fitted(kinds), fit_classifier=False, val_split=None)
    acc.aggregation_fit(predicted, actual)
    applied = np.repeat(np.array(kinds), counts)  # [maps]: the task's maps by called type
    point = acc.aggregate(applied)
    boot = AggregativeBootstrap(
        ACC(_fitted(kinds), fit_classifier=False, val_split=None),
        n_test_samples=TEST_RESAMPLES * TRAIN_RESAMPLES,
        random_state=SEED,
    )
    boot.aggregation_fit(predicted, actual)
    _, test_only = boot.aggregate_conf(applied)
    rng = np.random.default_rng(SEED)
    draws = []
    for _ in range(TRAIN_RESAMPLES):
        index = rng.integers(0, len(predicted), len(predicted))  # [N]: maps, with replacement
        fitted = ACC(_fitted(kinds), fit_classifier=False, val_split=None)
        fitted.aggregation_fit(predicted[index], actual[index])
        for _ in range(TEST_RESAMPLES):
            draws.append(fitted.aggregate(rng.choice(applied, len(applied))))
    both = ConfidenceIntervals(np.array(draws))
    return point, acc.Pte_cond_estim_.T, test_only, both


def _ours(kinds, labelled: pd.DataFrame, metrics: dict, applied: pd.DataFrame, task: str):
    counts = applied["count"].to_numpy()
    q = counts / counts.sum()
    rates = np.array(
        [
            [((labelled["visual"] == i) & (labelled["cnn"] == j)).sum() for j in kinds]
            for i in kinds
        ],
        dtype=float,
    )
    rates /= rates.sum(1, keepdims=True)  # R [K, K]
    point = adjusted_shares(q, rates)
    examples = labelled["labels_from"] + "/" + labelled["task"] + "/"
    examples += labelled["example_id"].astype(str)
    key = f"{task}.finetuned"
    found = corrected_shares(
        q,
        np.array([metrics[f"{key}.{k}_ci_low"] for k in kinds]),
        np.array([metrics[f"{key}.{k}_ci_high"] for k in kinds]),
        labelled["visual"],
        labelled["cnn"],
        examples,
        kinds,
        float(metrics["seed_stability.max_share_change"]),
        SHARE_RESAMPLES,
        SEED,
    )
    return point, found, rates


def _fmt(low: float, high: float) -> str:
    return "-" if np.isnan(low) else f"[{low:.3f}, {high:.3f}]"


def crosscheck() -> str:
    lines = [
        "| task | R from | type | observed | ours (ACC) | QuaPy ACC | |diff| "
        "| our 95% interval | QuaPy bootstrap, task's maps | QuaPy bootstrap, both |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    largest = 0.0
    for task in TASKS:
        kinds, labelled, metrics, applied = _inputs(task)
        for name, part in (
            ("every labelled map", labelled),
            (f"round {DESIGN_ROUND}, unweighted", labelled[labelled["round"] == DESIGN_ROUND]),
        ):
            point, found, rates = _ours(kinds, part, metrics, applied, task)
            qp_point, qp_rates, test_only, both = _quapy(kinds, part, applied["count"].to_numpy())
            assert np.allclose(rates, qp_rates), f"{task}: QuaPy's R differs from ours"
            for i, k in enumerate(kinds):
                diff = abs(point[i] - qp_point[i])
                largest = max(largest, diff)
                lines.append(
                    f"| {task} | {name} | {k} | {applied['share'].iloc[i]:.3f} | {point[i]:.4f} "
                    f"| {qp_point[i]:.4f} | {diff:.1e} | {_fmt(found.ci_low[i], found.ci_high[i])} "
                    f"| {_fmt(test_only.I_low[i], test_only.I_high[i])} "
                    f"| {_fmt(both.I_low[i], both.I_high[i])} |"
                )
    lines += [
        "",
        f"Largest |ours - QuaPy| over every share: {largest:.1e} (same R, checked equal; QuaPy "
        "solves by SLSQP, ours by non-negative least squares). Our interval is '-' where the "
        "type is not identifiable (recall - false-positive rate not above 0), where the claims "
        "solve without it.",
    ]
    return "\n".join(lines)


def main() -> None:
    argparse.ArgumentParser(
        description=f"The share correction against QuaPy's ACC; writes {RECORD}."
    ).parse_args()
    if importlib.util.find_spec("quapy") is None:
        sys.exit(
            "error: QuaPy is not installed here; run this with a Python that has it "
            "(this module's docstring says how)"
        )
    text = crosscheck() + "\n"
    write_text(RECORD, text)
    print(text, end="")


if __name__ == "__main__":
    main()
