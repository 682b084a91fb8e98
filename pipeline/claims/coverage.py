"""How often the interval over seeds and examples (`seeds.across_seeds`) covers its target,
by simulation: `python -m pipeline.claims.coverage` writes the table that docs/statistics.md
shows (outputs/reference/seed_interval_coverage.md).

Each replicate draws `EXAMPLES` examples shared by every seed (sd 1 per unit and example), a
seed effect per seed and unit (sd: `spread` standard errors of one seed's estimate), and a
seed-by-example term (sd 0.5). A seed's estimate of a unit is the mean of its example
values, with a normal 95% interval (mean ± 1.96 sample sd / √N). Two statistics:
- `mean`: one unit; the target is the mean over seeds and examples, 0.
- `max`: the best of `UNITS` units (as "removing some head helps" reads the best of 72
  heads); per seed the best unit with its simultaneous interval (`selection.best_unit`),
  whose target is that seed's best true effect; across seeds the target is its mean over
  the population of seeds, E[max_u seed effect_u] = spread x SE x E[max of 72 normals].
For `mean`, the two-level percentile bootstrap (seeds with replacement, then examples) is
simulated beside it, as the alternative the interval was chosen over.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import integrate
from scipy.stats import norm

from pipeline.claims.rules import Estimate
from pipeline.claims.seeds import across_seeds
from pipeline.claims.selection import best_unit
from pipeline.claims.thresholds import CONFIDENCE, Z_CONFIDENCE
from pipeline.core.io import write_text

EXAMPLES = 100  # examples every seed is scored on
INTERACTION = 0.5  # sd of the seed-by-example term
UNITS = 72  # units the `max` statistic chooses from (MiniLM's 6 x 12 heads)
STANDARD_ERROR = math.sqrt((1 + INTERACTION**2) / EXAMPLES)  # one seed's, about 0.11
SEED_COUNTS = (2, 3, 5)
SPREADS = (0.0, 1.0, 3.0, 8.0)  # sd of the seed effect, in standard errors of one seed
STATISTICS = ("mean", "max")
REPLICATES = 2000
BOOTSTRAP_RESAMPLES = 300
LOWEST_COVERAGE = 0.94  # documented: every cell of `across_seeds` covers at least this often
# (95% less two Monte Carlo standard errors of a coverage at 2,000 replicates, 2 x 0.005)
TABLE = Path("outputs/reference/seed_interval_coverage.md")
HEADER = (
    "| statistic | seeds | seed spread (standard errors) | `across_seeds` "
    "| two-level percentile bootstrap |"
)


def expected_maximum(units: int) -> float:
    """E[max of `units` independent standard normals], by quadrature."""
    density = lambda x: x * units * norm.pdf(x) * norm.cdf(x) ** (units - 1)  # noqa: E731
    return float(integrate.quad(density, -np.inf, np.inf)[0])


@dataclass(frozen=True)
class Coverage:
    across_seeds: float
    two_level_bootstrap: float  # NaN for `max`


def simulate(
    seeds: int, spread: float, statistic: str, *, replicates: int = REPLICATES, rng_seed: int = 0
) -> Coverage:
    """Coverage of the 95% intervals of one cell of the table (module docstring)."""
    units = UNITS if statistic == "max" else 1
    sd = spread * STANDARD_ERROR
    target = sd * expected_maximum(units) if statistic == "max" else 0.0
    rng = np.random.default_rng(rng_seed)
    tail = (1 - CONFIDENCE) / 2 * 100
    ours = bootstrap = 0
    for _ in range(replicates):
        values = (
            rng.normal(0, 1, (units, EXAMPLES))
            + rng.normal(0, sd, (seeds, units, 1))
            + rng.normal(0, INTERACTION, (seeds, units, EXAMPLES))
        )  # [k, m, N]
        means = values.mean(-1)  # [k, m]
        half = Z_CONFIDENCE * values.std(-1, ddof=1) / math.sqrt(EXAMPLES)  # [k, m]
        if statistic == "max":
            per_seed = [best_unit(d, d - h, d + h) for d, h in zip(means, half, strict=True)]
        else:
            per_seed = [
                Estimate(float(d), float(d - h), float(d + h))
                for d, h in zip(means[:, 0], half[:, 0], strict=True)
            ]
        combined = across_seeds(per_seed)
        ours += combined.ci_low <= target <= combined.ci_high
        if statistic == "mean":
            bootstrap += _two_level_covers(values[:, 0], rng, tail)
    two_level = bootstrap / replicates if statistic == "mean" else math.nan
    return Coverage(ours / replicates, two_level)


def _two_level_covers(values: np.ndarray, rng: np.random.Generator, tail: float) -> bool:
    """Whether the two-level percentile bootstrap of seeds x examples `values` [k, N]
    covers 0: seeds drawn with replacement, then examples (one draw for every seed)."""
    seeds, examples = values.shape
    draws = rng.integers(0, examples, (BOOTSTRAP_RESAMPLES, examples))  # [B, N]
    picked = values[rng.integers(0, seeds, (BOOTSTRAP_RESAMPLES, seeds))]  # [B, k, N]
    drawn = np.take_along_axis(picked, np.broadcast_to(draws[:, None], picked.shape), axis=2)
    low, high = np.percentile(drawn.mean(axis=(1, 2)), [tail, 100 - tail])
    return bool(low <= 0 <= high)


def coverage_table(replicates: int = REPLICATES) -> str:
    """Every cell's coverage as the Markdown table docs/statistics.md shows."""
    rows = [HEADER, "|---|---|---|---|---|"]
    for statistic in STATISTICS:
        for k in SEED_COUNTS:
            for spread in SPREADS:
                found = simulate(k, spread, statistic, replicates=replicates)
                bootstrap = (
                    "-"
                    if math.isnan(found.two_level_bootstrap)
                    else f"{found.two_level_bootstrap:.3f}"
                )
                name = "mean" if statistic == "mean" else f"max over {UNITS} units"
                rows.append(
                    f"| {name} | {k} | {spread:g} | {found.across_seeds:.3f} | {bootstrap} |"
                )
    return "\n".join(rows)


def write_simulated_table(
    description: str, table: Callable[[int], str], out: Path, replicates: int
) -> None:
    """The command line of a simulated table: `--replicates` and `--out` (defaults
    `replicates` and `out`), then the table written atomically and printed."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--replicates", type=int, default=replicates)
    parser.add_argument("--out", type=Path, default=out)
    args = parser.parse_args()
    text = table(args.replicates) + "\n"
    write_text(args.out, text)
    print(text, end="")


def main() -> None:
    write_simulated_table(
        f"Simulate the seed interval's coverage and write {TABLE} "
        "(docs/statistics.md shows it; `python -m pipeline.claims.prose` copies it in).",
        coverage_table,
        TABLE,
        REPLICATES,
    )


if __name__ == "__main__":
    main()
