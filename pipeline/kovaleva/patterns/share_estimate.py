"""The pattern types' shares per (task, variant) from a round drawn to measure them
(design.py): the classifier's calls, corrected by maps labelled by eye.

Notation. A cell c is a (task, variant) of the run being estimated; h runs over the frozen
stratifier's calls and k over the five types (both CLASSES).

- W_ch = (the cell's maps called h) / (the cell's maps), from the run's own predictions
  (any run classified by the same frozen stratifier);
- P(k | h) = the share of the round's labelled maps of stratum h whose label by eye
  (`labels.resolve`) is k: a plain proportion, since every map of a stratum had the same
  inclusion probability n_h / N_h;
- Share_ck = sum_h W_ch P(k | h): in [0, 1], and the five shares of a cell sum to 1.

A stratum without a labelled map leaves P(. | h) unknown: the cell's shares are undefined
(NaN, with the reason) unless the cell has no map called h (W_ch = 0).

The transport assumption: P(k | h) is read off labelled maps pooled over every task and
variant of the round's frame, and applied to each cell (and to any run this stratifier
classified). It holds when the stratifier errs alike on a type's maps in every cell; it is
what `transport_check` tests on the labelled maps, stratum by stratum.

Types a cell's inputs cannot show (block on a one-sentence task) are structural zeros: for
such a cell P(k | h) is taken among the stratum's labelled maps of the other types
(`without_types`), since a pooled P(block | h) read off two-sentence maps would otherwise
give a one-sentence task a block share.

The interval (`estimate_shares`): a bootstrap of two independent parts, each resample
redrawing both,
  (a) the run's dev examples within each cell, with replacement (all maps of an example
      move together: an example is a cluster of maps across the strata), giving W*_ch as
      the resampled maps called h over the resampled maps;
  (b) each stratum's P*(. | h), drawn from Dirichlet(n_hk + 1/K) over the K types k, n_hk
      the stratum's labelled maps of type k (a Bayesian bootstrap of the labelled maps with
      Perks' prior: one labelled map's worth, spread evenly over the types); one draw of (b)
      serves every cell of a resample.
Share*_ck = sum_h W*_ch P*(k | h); the interval is the 2.5th and 97.5th percentiles of the
resamples, widened to hold the estimate where it does not. Part (a)'s resampled counts are
drawn as multinomials (n_c picks among n_c equally likely examples), which is the same as
resampling rows. Part (b) is not a plain resample of the labelled maps: a type that a
stratum's sample never showed (block among the heterogeneous calls, about one map in 60)
would then be 0 in every resample, and the interval would miss its share whenever the round
drew none, as the design simulation (pipeline/claims/share_simulation.py) showed for
block's share on the pair tasks. The prior's weight is the other side of that trade:
Jeffreys' 1/2 a type (two and a half maps a stratum) lifts a type the round rarely shows
above its true share, and the smallest type's interval then lay wholly above its true share
too often for the simulation's coverage bar; Perks' 1/K (one map a stratum) meets it. A sum
of types (`ShareDraws.sum_of`) takes its interval from the same resamples. The maps
labelled before the round (in earlier rounds, not in its frame) count in W like any other
map of the run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from pipeline.core.errors import PipelineError
from pipeline.kovaleva.patterns import CLASSES, FIRST_THREE
from pipeline.kovaleva.patterns.design import CALL, CELL
from pipeline.kovaleva.patterns.labels import SAMPLE_FILE, read_labels, read_sample, resolve

STRATUM = re.compile(r"^call:(?P<call>[^@]+)@(?P<digest>[0-9a-f]+)$")
PRIOR = 1 / len(CLASSES)  # the Dirichlet prior's weight on each type, in labelled maps (Perks')
STRATIFIER_FILE = "stratifier.pt"  # the frozen stratifier, in the model's label folder
# a drawn round's files (tools.patterns_round) -> their names in the label folder
KEPT_FILES = {
    STRATIFIER_FILE: STRATIFIER_FILE,
    "plan.csv": "share_plan.csv",
    "half_widths.csv": "share_half_widths.csv",
}


def round_labels(sample: pd.DataFrame, resolved: pd.DataFrame) -> pd.DataFrame:
    """The round's labelled maps: map_id, task, variant, call (parsed from `stratum`,
    `call:<type>@<digest>`), label (the label by eye, `labels.resolve`'s). Maps not yet
    labelled are left out."""
    parsed = sample["stratum"].str.extract(STRATUM)
    bad = parsed["call"].isna() | ~parsed["call"].isin(CLASSES)
    if bad.any():
        raise PipelineError(
            f"sample: stratum '{sample['stratum'][bad].iloc[0]}' of map "
            f"'{sample['map_id'][bad].iloc[0]}' is not call:<type>@<digest>; the estimator reads "
            "only a round drawn by the stratifier's call (python -m tools.patterns_round)"
        )
    if parsed["digest"].nunique() > 1:
        raise PipelineError(
            f"sample: strata name {parsed['digest'].nunique()} stratifiers "
            f"({', '.join(sorted(parsed['digest'].unique()))}); a round has one frozen "
            "stratifier: estimate each round on its own"
        )
    unknown = ~resolved["map_id"].isin(sample["map_id"])
    if unknown.any():
        raise PipelineError(
            f"labels: map '{resolved['map_id'][unknown].iloc[0]}' is not in the round's "
            "sample; resolve only the round's own labels"
        )
    maps = sample[["map_id", *CELL]].assign(call=parsed["call"])
    return maps.merge(resolved[["map_id", "label"]], on="map_id", how="inner")


def _drawn(folder: Path) -> pd.DataFrame:
    """The sample rows of a label folder's share round (their `stratum` a call)."""
    sample = read_sample(folder / SAMPLE_FILE)
    drawn = sample[sample["stratum"].str.startswith("call:")].reset_index(drop=True)
    if drawn.empty:
        raise PipelineError(
            f"{folder}: no share round (no map with a stratum call:<type>@<digest>); draw one "
            "with tools.patterns_round and merge it with tools.merge_round"
        )
    return drawn


def round_annotations(folder: Path, drawn: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every label of the share round's maps, one row per (map, annotator) (`drawn`: the
    round's sample rows, read from `folder` where not given)."""
    drawn = _drawn(folder) if drawn is None else drawn
    labels = read_labels(folder, read_sample(folder / SAMPLE_FILE)["map_id"])
    return labels[labels["map_id"].isin(drawn["map_id"])].reset_index(drop=True)


def read_round(folder: Path) -> pd.DataFrame:
    """The share round of a label folder (its maps whose `stratum` is a call, merged by
    tools.merge_round), as `round_labels` gives it; each map's one label is resolved among
    the round's own labels, so that a tie goes to the round's primary annotator."""
    drawn = _drawn(folder)
    return round_labels(drawn, resolve(round_annotations(folder, drawn)))


@dataclass(frozen=True)
class ShareDraws:
    """Per cell (`cells`, in order) and type (CLASSES): the estimate [C, K], the bootstrap
    resamples [B, C, K] and why a cell is undefined ('' where it is defined)."""

    cells: pd.MultiIndex
    estimate: np.ndarray
    draws: np.ndarray
    reasons: tuple[str, ...]

    def table(self, confidence: float = 0.95) -> pd.DataFrame:
        """One row per (cell, type): task, variant, type, share, ci_low, ci_high, reason."""
        found = pd.concat([self._rows(t, [t], confidence) for t in CLASSES], ignore_index=True)
        order = found["type"].map({t: i for i, t in enumerate(CLASSES)})
        return found.iloc[np.lexsort([order, found["variant"], found["task"]])].reset_index(
            drop=True
        )

    def sum_of(self, types: Sequence[str], name: str, confidence: float = 0.95) -> pd.DataFrame:
        """One row per cell for the share of `types` together (called `name`), its interval
        from the same resamples (not a sum of intervals)."""
        unknown = [t for t in types if t not in CLASSES]
        if unknown:
            raise PipelineError(f"sum_of: unknown types {unknown}; valid: {', '.join(CLASSES)}")
        return self._rows(name, list(types), confidence)

    def _rows(self, name: str, types: list[str], confidence: float) -> pd.DataFrame:
        columns = [CLASSES.index(t) for t in types]
        estimate = self.estimate[:, columns].sum(axis=1)
        draws = self.draws[:, :, columns].sum(axis=2)  # [B, C]
        tail = (1 - confidence) / 2 * 100
        low, high = np.percentile(draws, [tail, 100 - tail], axis=0)
        low, high = np.minimum(low, estimate), np.maximum(high, estimate)
        cells = self.cells.to_frame(index=False)
        return cells.assign(
            type=name, share=estimate, ci_low=low, ci_high=high, reason=list(self.reasons)
        )


def _codes(values: pd.Series, what: str) -> np.ndarray:
    """Each value's index in CLASSES; an unknown one is refused, naming `what`."""
    codes = pd.Categorical(values, categories=CLASSES).codes
    if (codes < 0).any():
        unknown = sorted(pd.unique(values[codes < 0]))
        raise PipelineError(f"{what} holds {unknown}; the types are {', '.join(CLASSES)}")
    return codes


def example_calls(predictions: pd.DataFrame) -> pd.DataFrame:
    """Maps per (task, variant, example_id) and call (columns CLASSES, in order)."""
    calls = _codes(predictions[CALL], f"predictions: column '{CALL}'")
    keys = [*(predictions[c] for c in [*CELL, "example_id"]), pd.Series(calls, name="call")]
    counts = pd.Series(1, index=pd.MultiIndex.from_arrays(keys)).groupby(level=[0, 1, 2, 3])
    table = counts.size().unstack(fill_value=0).reindex(columns=range(len(CLASSES)), fill_value=0)
    return table.set_axis(list(CLASSES), axis=1)


def type_counts(labelled: pd.DataFrame) -> np.ndarray:
    """[H, K]: the labelled maps of each stratum (rows: calls) by their label (columns)."""
    calls = _codes(labelled["call"], "labelled maps: column 'call'")
    labels = _codes(labelled["label"], "labelled maps: column 'label'")
    size = len(CLASSES)
    return np.bincount(calls * size + labels, minlength=size * size).reshape(size, size)


def without_types(p: np.ndarray, types: Sequence[str]) -> np.ndarray:
    """P(k | h) [..., H, K] for maps that cannot be of `types`: their columns set to 0 and
    each row renormalised over the other types (NaN where no labelled map is left)."""
    kept = p.copy()
    kept[..., [CLASSES.index(t) for t in types]] = 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        return kept / kept.sum(axis=-1, keepdims=True)


def estimate_shares(
    predictions: pd.DataFrame,
    labelled: pd.DataFrame,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    impossible: Mapping[str, Sequence[str]] | None = None,
) -> ShareDraws:
    """Share_ck = sum_h W_ch P(k | h) for every cell of `predictions` (columns task, variant,
    example_id and the call, `CALL`), P(k | h) from `labelled` (one row per labelled map:
    call, label by eye; `round_labels`), with the bootstrap of the module docstring.
    `impossible`: task -> the types its maps cannot be (block on a one-sentence task): for
    its cells, P(k | h) is taken among the stratum's labelled maps of the other types
    (`without_types`), so those types' shares are 0."""
    rng = np.random.default_rng(seed)
    counts = type_counts(labelled)
    n = counts.sum(axis=1)  # [H]
    with np.errstate(invalid="ignore", divide="ignore"):
        p = counts / n[:, None]  # [H, K], NaN rows for strata without a labelled map
    p_draws = np.zeros((n_resamples, len(CLASSES), len(CLASSES)))
    for h in np.flatnonzero(n):
        p_draws[:, h] = rng.dirichlet(counts[h] + PRIOR, size=n_resamples)
    if predictions.empty:
        raise PipelineError("predictions: no maps; pass the run's patterns_apply predictions")
    by_example = example_calls(predictions)
    cell_of, cells = pd.factorize(by_example.index.droplevel("example_id"))
    every_example = by_example.to_numpy()
    estimate = np.full((len(cells), len(CLASSES)), np.nan)  # [C, K]
    draws = np.full((n_resamples, len(cells), len(CLASSES)), np.nan)  # [B, C, K]
    reasons = []
    for cell, (task, _) in enumerate(cells):
        calls = every_example[cell_of == cell]  # [E, H]
        picks = rng.multinomial(len(calls), np.full(len(calls), 1 / len(calls)), n_resamples)
        drawn = picks @ calls  # [B, H]
        w = calls.sum(axis=0) / calls.sum()  # [H]
        w_draws = drawn / drawn.sum(axis=1, keepdims=True)  # [B, H]
        excluded = (impossible or {}).get(task, ())
        p_cell, p_cell_draws = (
            (without_types(p, excluded), without_types(p_draws, excluded))
            if excluded
            else (p, p_draws)
        )
        held = calls.sum(axis=0) > 0
        missing = [CLASSES[h] for h in np.flatnonzero((n == 0) & held)]
        emptied = [CLASSES[h] for h in np.flatnonzero((n > 0) & held & np.isnan(p_cell[:, 0]))]
        reasons.append(
            f"no labelled map in stratum {', '.join(missing)}, which holds the cell's maps"
            if missing
            else f"every labelled map of stratum {', '.join(emptied)} is of a type "
            f"{task}'s inputs cannot show ({', '.join(excluded)})"
            if emptied
            else ""
        )
        if not reasons[-1]:
            estimate[cell] = w @ np.nan_to_num(p_cell)
            draws[:, cell] = np.einsum("bh,bhk->bk", w_draws, np.nan_to_num(p_cell_draws))
    return ShareDraws(
        pd.MultiIndex.from_tuples(list(cells), names=CELL), estimate, draws, tuple(reasons)
    )


def run_shares(
    predictions: pd.DataFrame,
    labelled: pd.DataFrame,
    *,
    n_resamples: int,
    seed: int,
    impossible: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """Per (task, variant) of a run's `predictions`: each type's share and the first three
    types' together (type `first_three`), from `labelled` (`read_round`; `impossible` as in
    `estimate_shares`): columns task, variant, type, share, ci_low, ci_high, reason ('' where
    defined)."""
    draws = estimate_shares(
        predictions, labelled, n_resamples=n_resamples, seed=seed, impossible=impossible
    )
    return pd.concat(
        [draws.table(), draws.sum_of(list(FIRST_THREE), "first_three")], ignore_index=True
    )


def transport_check(
    labelled: pd.DataFrame, by: str = "task", *, n_resamples: int = 9999, seed: int = 0
) -> pd.DataFrame:
    """Per stratum (call): do its labelled maps' types differ across `by` (task or variant)?
    Fisher's exact test of the groups x types table (Freeman-Halton for more than 2 x 2,
    p-value by seeded Monte Carlo). Columns: call, groups, maps, p_value, note (why a
    stratum has no test: fewer than two groups or one type only)."""
    rows = []
    for h in CLASSES:
        stratum = labelled[labelled["call"] == h]
        table = pd.crosstab(stratum[by].to_numpy(), stratum["label"].to_numpy())
        table = table.loc[table.sum(axis=1) > 0, table.sum(axis=0) > 0]
        note = (
            "fewer than two groups"
            if table.shape[0] < 2
            else "one type only"
            if table.shape[1] < 2
            else ""
        )
        p_value = np.nan
        if not note:
            method = stats.MonteCarloMethod(
                n_resamples=n_resamples, rng=np.random.default_rng(seed)
            )
            is_2x2 = table.shape == (2, 2)
            p_value = stats.fisher_exact(table.to_numpy(), method=None if is_2x2 else method).pvalue
        rows.append((h, table.shape[0], int(table.to_numpy().sum()), float(p_value), note))
    return pd.DataFrame(rows, columns=["call", "groups", "maps", "p_value", "note"])
