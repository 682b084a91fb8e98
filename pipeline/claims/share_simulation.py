"""The pattern-type shares' design simulation at observed prevalence:
`python -m pipeline.claims.share_simulation` writes the table that
docs/statistics.md shows (outputs/reference/share_simulation.md): how often the shares'
95% interval (`share_estimate.estimate_shares`) holds the true value, and how often the
share claims are decided, and wrongly, when runs and rounds are drawn as the default run's
and its share round were.

The truth is what the round and the run show: P(k | h), the round's labelled maps of call h
whose resolved label is k (`share_estimate.read_round`), and W_ch, cell c's share of maps
called h in the run's predictions (column `design.CALL`); a cell's true share of type k is
sum_h W_ch P(k | h), the estimate on the observed run and round. On a task whose inputs
cannot show a type (block on a one-sentence task, `inputs.impossible_types`), P(k | h) is
taken among the other types (`share_estimate.without_types`), as the estimator takes it.
Each replicate
  1. simulates the run: each cell's dev examples are drawn with replacement from the run's
     own, as many as the cell has, every map of an example with its call. Chosen over a
     Dirichlet around the cell's call shares: it keeps the observed spread between examples
     and how calls go together within an example (a pair task's few block calls sit in a few
     examples) with nothing to fit, where a Dirichlet gives every call one relative spread,
     which the rarest calls' handful of maps cannot pin down. Its limit: the simulated
     examples are the observed ones, so examples unlike them are not simulated;
  2. draws a round from every cell's simulated maps with `design.draw_by_call`, n_h the
     round's labelled maps of call h (at most the simulated maps of that call);
  3. labels each drawn map of call h with type k at probability P(k | h) (its task's, as
     above): the transport assumption holds in the simulation by construction;
  4. estimates the fine-tuned cells' shares (`estimate_shares`, `resamples` resamples, the
     same impossible types), and
     judges each target as the share claims do, with `rules.settle`:
     - first_three: the first three types' share, supported above LARGE_PART;
     - heterogeneous: the heterogeneous share, supported below MINORITY;
     - types_recur: the smallest share of the types the task's input can show
       (`input_types`: no block on a one-sentence task), each bound the smallest of the
       types' (`rules.smallest`), times the model's heads, supported above RECURS.
Per (target, task): the true value, the share of replicates whose interval holds it
(coverage), decided (supported or contradicted), and the decided verdicts the truth denies:
falsely contradicted where the true value lies on the claimed side of the threshold, falsely
supported where it does not. An undefined estimate neither covers nor decides.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from pipeline.claims.rules import Beyond, Estimate, Verdict, settle, smallest
from pipeline.claims.thresholds import LARGE_PART, MINORITY, RECURS
from pipeline.core.errors import PipelineError, exit_on_error
from pipeline.core.io import write_text
from pipeline.core.schema import Variant
from pipeline.kovaleva.patterns import CLASSES, FIRST_THREE
from pipeline.kovaleva.patterns.design import CALL, CELL, draw_by_call
from pipeline.kovaleva.patterns.inputs import impossible_types, input_types
from pipeline.kovaleva.patterns.share_estimate import (
    ShareDraws,
    estimate_shares,
    example_calls,
    read_round,
    type_counts,
    without_types,
)

PREDICTIONS = Path("outputs/patterns/predictions/seed42.parquet")  # the default run's
ROUND = Path("data/annotations/minilm_l6")  # the label folder holding the share round
TABLE = Path("outputs/reference/share_simulation.md")
REPLICATES = 2000
RESAMPLES = 1000
SEED = 2031
JUDGED = Variant.finetuned.value  # the share claims read the fine-tuned maps
HEADER = (
    "| target | task | true value | supported if | coverage | decided "
    "| falsely contradicted | falsely supported |"
)


@dataclass(frozen=True)
class Observed:
    """What the simulation takes as true: the run's maps per example and call (`calls`,
    `share_estimate.example_calls`), P(k | h) [H, K] pooled over the round, the round's
    labelled maps per call (n_h, CLASSES order), the model's heads, and the types each
    task's inputs cannot show (`inputs.impossible_types`)."""

    calls: pd.DataFrame
    p: np.ndarray
    sizes: np.ndarray
    heads: int
    impossible: Mapping[str, tuple[str, ...]]

    def p_of(self, task: str) -> np.ndarray:
        """P(k | h) [H, K] for `task`'s maps: among the types its inputs can show."""
        excluded = self.impossible.get(task, ())
        return np.nan_to_num(without_types(self.p, excluded)) if excluded else self.p


def observe(predictions: pd.DataFrame, labelled: pd.DataFrame) -> Observed:
    """The truth of the module docstring from a run's predictions and its round's labelled
    maps (`read_round`); refuses a run whose maps fall in a stratum without a label (of a
    type their task can show)."""
    if CALL not in predictions.columns:
        raise PipelineError(
            f"predictions: no column '{CALL}' (the frozen stratifier's call); rerun "
            "patterns_apply (dvc repro patterns_apply)"
        )
    counts = type_counts(labelled)
    sizes = counts.sum(axis=1)
    calls = example_calls(predictions)
    unlabelled = [h for h, n in zip(CLASSES, sizes, strict=True) if n == 0 and calls[h].any()]
    if unlabelled:
        raise PipelineError(
            f"round: no labelled map called {', '.join(unlabelled)}, which the run's maps "
            "are; the truth needs P(type | call) for every call the run makes: label the "
            "round's maps of that call"
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.nan_to_num(counts / sizes[:, None])
    impossible = impossible_types(calls.index.unique("task"))
    for task, excluded in impossible.items():
        held = calls.xs(task, level="task").sum(axis=0).to_numpy() > 0
        emptied = held & (p[:, [CLASSES.index(k) for k in input_types(task)]].sum(axis=1) == 0)
        if emptied.any():
            raise PipelineError(
                f"round: every labelled map called {CLASSES[np.argmax(emptied)]} is of a type "
                f"{task}'s inputs cannot show ({', '.join(excluded)}); label more maps of "
                "that call"
            )
    heads = predictions.groupby(["layer", "head"]).ngroups
    return Observed(calls, p, sizes, heads, impossible)


def true_draws(observed: Observed) -> ShareDraws:
    """The fine-tuned cells' true shares sum_h W_ch P(k | h), as one resample of no width
    (so that a target's true value is measured as its estimates are)."""
    judged = observed.calls.xs(JUDGED, level="variant", drop_level=False)
    cells = judged.groupby(level=CELL, sort=False).sum()
    w = cells.to_numpy() / cells.to_numpy().sum(axis=1, keepdims=True)  # [C, H]
    shares = np.stack([w[i] @ observed.p_of(task) for i, (task, _) in enumerate(cells.index)])
    return ShareDraws(cells.index, shares, shares[None], ("",) * len(cells))


def measured(draws: ShareDraws, heads: int) -> dict[tuple[str, str], Estimate]:
    """Each target of each cell's task (module docstring), with its 95% interval."""
    found = {}
    first_three = draws.sum_of(list(FIRST_THREE), "first_three")
    heterogeneous = draws.sum_of(["heterogeneous"], "heterogeneous")
    each = {k: draws.sum_of([k], k) for k in CLASSES}
    for i, (task, _) in enumerate(draws.cells):
        found["first_three", task] = _estimate(first_three.iloc[i])
        found["heterogeneous", task] = _estimate(heterogeneous.iloc[i])
        weakest = smallest(*(_estimate(each[k].iloc[i]) for k in input_types(task)))
        found["types_recur", task] = Estimate(
            heads * weakest.statistic, heads * weakest.ci_low, heads * weakest.ci_high
        )
    return found


def _estimate(row: pd.Series) -> Estimate:
    return Estimate(float(row["share"]), float(row["ci_low"]), float(row["ci_high"]))


RULES = {
    "first_three": Beyond(LARGE_PART),
    "heterogeneous": Beyond(MINORITY, side="below"),
    "types_recur": Beyond(RECURS),
}


def simulated_run(observed: Observed, rng: np.random.Generator) -> pd.DataFrame:
    """One run: each cell's examples drawn with replacement from the observed ones (step 1),
    one row per map (task, variant, example_id, the call)."""
    parts = []
    for (task, variant), cell in observed.calls.groupby(level=CELL, sort=False):
        counts = cell.to_numpy()[rng.integers(len(cell), size=len(cell))]  # [E, H]
        calls = np.repeat(np.tile(np.arange(len(CLASSES)), len(counts)), counts.ravel())
        examples = np.repeat(np.arange(len(counts)), counts.sum(axis=1))
        parts.append(
            pd.DataFrame(
                {
                    "task": task,
                    "variant": variant,
                    "example_id": examples,
                    CALL: pd.Categorical.from_codes(calls, CLASSES),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def simulated_round(
    run: pd.DataFrame, observed: Observed, rng: np.random.Generator
) -> pd.DataFrame:
    """One round drawn from `run` by the stratifier's call (step 2), labelled from
    P(k | h) (step 3): task, call, label."""
    available = run[CALL].value_counts()
    sizes = {h: int(min(n, available[h])) for h, n in zip(CLASSES, observed.sizes, strict=True)}
    sizes = {h: n for h, n in sizes.items() if n}  # a call no map has, or no label
    drawn = draw_by_call(run, sizes, seed=int(rng.integers(2**31)))
    call = drawn[CALL].cat.codes.to_numpy()
    by_task = {task: observed.p_of(task) for task in drawn["task"].unique()}
    p = np.stack([by_task[task] for task in drawn["task"]])  # [N, H, K]
    chances = np.cumsum(p[np.arange(len(call)), call], axis=1)  # [N, K]
    picked = (rng.random(len(call))[:, None] > chances).sum(axis=1)
    picked = np.minimum(picked, len(CLASSES) - 1)  # a cumulative sum a rounding short of 1
    labels = np.asarray(CLASSES)[picked]
    return pd.DataFrame({"task": drawn["task"], "call": drawn[CALL].astype(str), "label": labels})


def simulate(
    observed: Observed,
    replicates: int,
    resamples: int,
    seed: int = SEED,
    progress: Callable = tqdm,
) -> pd.DataFrame:
    """Per (target, task): true value, coverage, decided, falsely contradicted and falsely
    supported (NaN where the truth makes the verdict right), over `replicates` runs and
    rounds, each interval of `resamples` resamples."""
    rng = np.random.default_rng(seed)
    truth = {key: m.statistic for key, m in measured(true_draws(observed), observed.heads).items()}
    verdicts: dict[tuple[str, str], list[Verdict]] = {key: [] for key in truth}
    covered: dict[tuple[str, str], list[bool]] = {key: [] for key in truth}
    for _ in progress(range(replicates), desc="replicates"):
        run = simulated_run(observed, rng)
        labelled = simulated_round(run, observed, rng)
        judged = run[run["variant"] == JUDGED]
        draws = estimate_shares(
            judged,
            labelled,
            n_resamples=resamples,
            seed=int(rng.integers(2**31)),
            impossible=observed.impossible,
        )
        for key, found in measured(draws, observed.heads).items():
            verdicts[key].append(settle(RULES[key[0]](found), found)[0])
            covered[key].append(bool(found.ci_low <= truth[key] <= found.ci_high))
    rows = []
    for (target, task), value in truth.items():
        said = pd.Series(verdicts[target, task])
        right = RULES[target](Estimate(value, value, value))
        rows.append(
            {
                "target": target,
                "task": task,
                "true_value": value,
                "coverage": float(np.mean(covered[target, task])),
                "decided": float(said.isin(["supported", "contradicted"]).mean()),
                "falsely_contradicted": float((said == "contradicted").mean())
                if right == "supported"
                else np.nan,
                "falsely_supported": float((said == "supported").mean())
                if right == "contradicted"
                else np.nan,
            }
        )
    return pd.DataFrame(rows)


def markdown(found: pd.DataFrame, replicates: int, resamples: int) -> str:
    """The table as docs/statistics.md shows it, after a line of its settings."""

    def number(value: float) -> str:
        return "-" if np.isnan(value) else f"{value:.3f}"

    lines = [
        f"{replicates:,} simulated runs and rounds; {resamples:,} resamples an interval; "
        "fine-tuned maps; types_recur in heads' worth of maps.",
        "",
        HEADER,
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in found.itertuples(index=False):
        rule = RULES[row.target]
        side = ">" if rule.side == "above" else "<"
        cells = [
            row.target,
            row.task,
            number(row.true_value),
            f"{side} {rule.threshold.value:g}",
            *(number(v) for v in (row.coverage, row.decided)),
            *(number(v) for v in (row.falsely_contradicted, row.falsely_supported)),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a count: give 1 or more")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--predictions", type=Path, default=PREDICTIONS, help="a run's predictions")
    parser.add_argument("--round", type=Path, default=ROUND, help="the share round's label folder")
    parser.add_argument("--replicates", type=_positive, default=REPLICATES)
    parser.add_argument("--resamples", type=_positive, default=RESAMPLES)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--out", type=Path, default=TABLE)
    args = parser.parse_args(argv)
    with exit_on_error():
        if not args.predictions.exists():
            raise PipelineError(
                f"predictions not found: {args.predictions}; run patterns_apply "
                "(dvc repro patterns_apply) or pass --predictions"
            )
        observed = observe(pd.read_parquet(args.predictions), read_round(args.round))
        found = simulate(observed, args.replicates, args.resamples, args.seed)
    text = markdown(found, args.replicates, args.resamples)
    write_text(args.out, text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
