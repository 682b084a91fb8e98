"""Every number a verdict depends on, declared once, each with the reason it has this value.

A threshold is either a bound the paper's own words state (`from_paper=True`: a direction,
"mostly"), or a reading of a vague word that the paper leaves without a number, declared
here (`from_paper=False`). A number the paper prints as its result is an estimate, not a
bound: it never becomes a threshold, and it must clear its claim's threshold by a unit of
its last printed digit (tests/claims/test_paper_numbers.py). The report prints each
claim's threshold with its reason, and its verdict at half and at double the threshold.

When they were set: not before the results they judge. The values below were declared
between 2026-11-23 and 2026-11-28 (docs/stages/claims.md gives each one's date and history:
RECURS's one head's share and MINORITY came with registry version 3, DOES_WELL's absolute
reading of Clark's "All" row with version 6), each after the MiniLM-L6 quick and standard
results had been committed and read, so verdicts on MiniLM are fitted, not registered. The
claims registry (registry.py, amendments.yaml) records them; once its version is frozen,
changing one is a dated amendment with its reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from scipy.stats import norm


@dataclass(frozen=True)
class Threshold:
    value: float
    reason: str  # one line: where the value comes from
    from_paper: bool  # True: the paper's words or numbers fix it; False: declared here


HALF = 0.5  # "more than half", "under half", "at least half": every such reading's one value
QUARTER = 0.25  # "at least a quarter": every such reading's one value
WHOLE = 1.0  # the largest value a share can take: the bound of every claim about a share
DIRECTION = Threshold(
    0.0, "the paper states a direction (higher, better, more) and no margin", from_paper=True
)
MOSTLY = Threshold(HALF, "'mostly' (Kovaleva et al. Sec. 4.4): more than half", from_paper=True)
RECURS = Threshold(
    1.0,
    "'recur consistently across heads' (Sec. 4.1) read as: each type fills at least one "
    "head's worth of a task's maps, a share of 1/heads (1/72 with 6 layers of 12 heads, "
    "1/144 on bert-base); the paper gives no number",
    from_paper=False,
)
MINORITY = Threshold(
    HALF,
    "'an upper bound on potentially informative heads' of 32% on MRPC (Sec. 4.1) read as: "
    "heterogeneous maps are under half of the task's maps; the paper gives no bound",
    from_paper=False,
)
LARGE_PART = Threshold(
    QUARTER,
    "the paper gives no number for 'a large part'; declared: at least a quarter of the maps",
    from_paper=False,
)
NOT_NOTICEABLE = Threshold(
    -0.01,
    "Michel et al. give no number for 'no noticeable loss'; declared: a loss under 1 point, "
    "about the largest change (-0.96) their Table 3 calls insignificant",
    from_paper=False,
)
SURVIVES = Threshold(
    HALF,
    "extension, declared: [CLS]/[SEP] keep at least half of their attention share under norms",
    from_paper=False,
)

PRUNED_FRACTION = 0.4  # Michel et al. Sec. 4.2: 40% of BERT's heads pruned on MNLI-matched

# How intervals become verdicts.
CONFIDENCE = 0.95  # every interval the stages write is a 95% interval
Z_CONFIDENCE = float(norm.ppf(1 - (1 - CONFIDENCE) / 2))  # 1.96 standard errors
POWER = 0.80  # the detectable effect: the one the rule finds with this probability
Z_POWER = float(norm.ppf(POWER))  # 0.84 standard errors
SENSITIVITY = (0.5, 2.0)  # each verdict is also given at these multiples of its threshold
DOES_WELL = Threshold(
    HALF,
    "Clark et al. give no number for 'does well at syntax overall'; read as finding most "
    "(over half) of the head words: their best 'All' head finds 34.5%, far below the heads "
    "they call specialised (dobj, det, pobj, poss: 76-94%); declared after every model's "
    "result was seen (fitted: docs/stages/claims.md gives the verdicts at other thresholds)",
    from_paper=False,
)
SET_APART = Threshold(
    QUARTER,
    "Kovaleva et al. give no number for 'stand out'; declared after the MiniLM FrameNet "
    "scores were seen: the second-best head scores at least a quarter above the third-best",
    from_paper=False,
)
