"""What pins the step from a claim's per-seed measurements to its verdict, for the registry's
digest (registry.py): the verdicts, pooled intervals and power figures of a synthetic grid
of per-seed statistics, and the gates' answers on a synthetic grid of margins.

The verdict grid runs every case through what the claims stage runs after measuring: the
interval over seeds (seeds.across_seeds, with its t quantile), the rule (rules.Beyond, on
both sides), `settle` (zero-width and unresolved intervals), the power
check (the detectable effect with Z_POWER, the rows and seeds it would take) and the
sensitivity columns (evaluate.evaluate_claim); and how a finding read two ways combines its
readings' verdicts (readings.combined), for every pair of them. The gate grid asks
validity.learned and validity.headroom_failure, on what they read of a model (validity's
`Learning` and `Room`, the best constant prediction's score by validity.constant_score),
whether each model passes. Each number
enters the digest to `DIGITS` significant digits, as the fixture's do (measurement_pins):
changing how seeds are pooled, a quantile, a rule, `settle`, the power check or a gate's
cut-off moves the digest; moving or renaming code does not.
"""

from __future__ import annotations

import math
from itertools import product

import pandas as pd

from pipeline.claims.claim import Claim, Source
from pipeline.claims.evaluate import evaluate_claim
from pipeline.claims.readings import combined
from pipeline.claims.rules import VERDICTS, Beyond, Estimate
from pipeline.claims.thresholds import Threshold
from pipeline.claims.validity import Learning, Room, constant_score, headroom_failure, learned
from pipeline.core.stats import Interval

DIGITS = 4  # significant digits of each grid number in the digest
SEEDS = (42, 43, 44)
GRID_ROWS = 100.0  # the rows behind each synthetic interval (the rows-needed reckoning)
DEV_ROWS = 400.0  # the synthetic task's whole dev set
EFFECT = 0.1  # the effect the synthetic claim's power check looks for
CENTRES = (-0.25, -0.06, 0.03, 0.12, 0.3)  # the seeds' mean, from the threshold 0
HALF_WIDTHS = (0.04, 0.2)  # each seed's interval: [e - w, e + 1.2 w] (asymmetric)
SPREADS = (0.0, 0.05)  # between neighbouring seeds' estimates
ROW_FIELDS = (
    "verdict", "estimate", "ci_low", "ci_high", "detectable", "rows_needed",
    "seeds_needed", "verdict_half_threshold", "verdict_double_threshold",
)  # fmt: skip
UNRESOLVED = "unresolved"


def _claim(side: str) -> Claim:
    return Claim(
        name=f"grid.{side}",
        source=Source("grid", "-", "a synthetic statistic"),
        finding="a synthetic statistic lies on the claimed side of 0.05",
        statistic="synthetic",
        rule=Beyond(Threshold(0.05, "grid", from_paper=False), side=side),  # type: ignore[arg-type]
        measure=lambda out, seed: Estimate(0.0, 0.0, 0.0),
        finetuned=("grid",),
        gated=False,
        effect=EFFECT,
    )


def _seed(estimate: float, width: float, **extra: object) -> Estimate:
    return Estimate(
        estimate, estimate - width, estimate + 1.2 * width, evidence={"rows": GRID_ROWS}, **extra
    )  # type: ignore[arg-type]


def grid_cases() -> dict[str, dict[int, Estimate]]:
    """Per case, its per-seed statistics: one seed or three, around each centre, each width
    and spread; then the edges `settle` decides (zero widths, an unresolved interval), and
    seeds whose verdicts disagree."""
    cases: dict[str, dict[int, Estimate]] = {}
    for seeds, centre, width, spread in product((1, 3), CENTRES, HALF_WIDTHS, SPREADS):
        if seeds == 1 and spread:
            continue
        estimates = [centre + spread * (i - (seeds - 1) / 2) for i in range(seeds)]
        cases[f"{seeds}:{centre}:{width}:{spread}"] = {
            s: _seed(e, width) for s, e in zip(SEEDS, estimates, strict=False)
        }
    collapsed = Estimate(0.0, 0.0, 0.0)
    cases |= {
        "collapsed": {42: collapsed},
        "one seed collapsed": {42: _seed(0.2, 0.04), 43: collapsed, 44: _seed(0.25, 0.04)},
        "unresolved": {42: _seed(0.01, 0.02, unresolved=UNRESOLVED)},
        # one seed's interval on each side of the threshold: `seed-dependent`
        "seeds disagree": {42: _seed(0.3, 0.04), 43: _seed(-0.25, 0.04)},
        "seeds disagree, one undecided": {
            42: _seed(0.3, 0.04),
            43: _seed(0.03, 0.2),
            44: _seed(-0.25, 0.04),
        },
    }
    return cases


def _rounded(value: object) -> str:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.{DIGITS}g}"
    return str(value)


def verdict_grid() -> dict[str, list[str]]:
    """Each grid case's row under each side's rule (`ROW_FIELDS`, rounded), by case; and a
    finding's verdict from each pair of its two readings' verdicts (readings.combined)."""
    pinned = {}
    for side in ("above", "below"):
        claim = _claim(side)
        for name, measured in grid_cases().items():
            row, _ = evaluate_claim(claim, measured, dict.fromkeys(measured, ""), DEV_ROWS)
            pinned[f"{side}:{name}"] = [_rounded(row[f]) for f in ROW_FIELDS]
    for first, second in product(VERDICTS, VERDICTS):
        verdict, _ = combined({"a": first, "b": second}, {"a": "", "b": ""})
        pinned[f"readings:{first}|{second}"] = [verdict]
    return pinned


def _interval(low: float) -> Estimate:
    return Estimate.of(Interval(low + 0.05, low, low + 0.1))


LEARNED_MARGINS = (-0.02, 0.004, 0.05)  # lower bounds over chance and over no fine-tuning
HEADROOM_MARGINS = (-0.01, 0.004, 0.011, 0.05)  # baseline's lower bound over chance
NEEDED = (0.0, 0.001, 0.012)  # the room a removal claim needs


def gate_grid() -> dict[str, str]:
    """Whether each synthetic model passes the learning gate and the headroom gate."""
    seed = SEEDS[0]
    pinned = {}
    for chance_margin, pretrained_margin in product(LEARNED_MARGINS, LEARNED_MARGINS):
        learning = Learning(
            score=_interval(0.7),
            over_chance=_interval(chance_margin),
            over_pretrained=_interval(pretrained_margin),
            chance=0.6,
            pretrained=0.5,
        )
        passed = learned(learning, "grid", seed).passed
        pinned[f"learned:{chance_margin}:{pretrained_margin}"] = str(passed)
    labels = pd.Series([1] * 60 + [0] * 40)  # accuracy's chance: 0.6
    chance = constant_score("accuracy", labels)
    for margin, needed in product(HEADROOM_MARGINS, NEEDED):
        room = Room("accuracy", len(labels), chance, _interval(0.6 + margin))
        passed = headroom_failure(room, "grid", seed, needed) == ""
        pinned[f"headroom:{margin}:{needed}"] = str(passed)
    return pinned
