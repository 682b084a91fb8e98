"""What corrected pattern-type shares (shares.CorrectedShares) say in words, and the two
ends of a share below the classifier's resolution: the notes and brackets of the share
claims (pipeline/analyses/patterns_apply/claims.py) and of the simulations of their
coverage (boundary_coverage.py, design_coverage.py)."""

from __future__ import annotations

import numpy as np

from pipeline.claims.shares import CorrectedShares, exact_lower


def unidentified(found: CorrectedShares) -> str:
    """Why the corrected shares cannot all be estimated ('' when they can)."""
    hidden = [
        f"{k} ({n:.0f} maps labelled by eye, {r:.0f} of them recalled in cross-validation)"
        for k, n, r, known in zip(
            found.classes, found.labelled, found.recalled, found.identifiable, strict=True
        )
        if not known
    ]
    if not hidden:
        return ""
    return (
        f"the classifier cannot identify {'; '.join(hidden)}: its maps are not called that "
        "type more often than other maps are, so its share cannot be estimated"
    )


def unresolved(found: CorrectedShares) -> str:
    """The corrected shares whose interval reaches 0 ('' when none does)."""
    below = [
        f"{k} (the classifier calls {found.false_positive[i]:.1%} of other maps {k})"
        for i, k in enumerate(found.classes)
        if k in found.unresolved()
    ]
    return f"below what the classifier resolves: {', '.join(below)}" if below else ""


def below_resolution(found: CorrectedShares) -> str:
    """Why the smallest share cannot be placed against any threshold ('' when it can): the
    types whose observed share is below what the classifier calls that type by mistake
    (shares.CorrectedShares.below_resolution)."""
    below = [
        f"{k} (observed share at most {found.observed_high[i]:.2%}, below the "
        f"{found.false_positive_low[i]:.2%} lower bound of the rate at which the classifier "
        f"calls other maps {k})"
        for i, k in enumerate(found.classes)
        if k in found.below_resolution()
    ]
    return f"below the classifier's resolution: {', '.join(below)}" if below else ""


Shares = tuple[np.ndarray, np.ndarray, np.ndarray]  # corrected, ci_low, ci_high: [K] each


def share_bounds(found: CorrectedShares) -> np.ndarray:
    """Each type's stated upper bound on its share [K]: the classifier's observed share's 95%
    upper bound over the exact 95% lower bound of the type's recall (it calls at least
    recall x p of the maps that type, so p <= observed / recall), at most 1."""
    recall_low = exact_lower(found.recalled, found.labelled)  # [K]
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = found.observed_high / recall_low  # [K]: inf where recall's bound is 0
    return np.minimum(np.nan_to_num(bound, nan=1.0, posinf=1.0), 1.0)


def shares_of(found: CorrectedShares) -> Shares:
    return found.corrected, found.ci_low, found.ci_high


def bracket_ends(found: CorrectedShares) -> list[Shares]:
    """The corrected shares with every type below the classifier's resolution set, as a
    point, to 0 and then to its stated upper bound (`share_bounds`): the two ends between
    which its share is unknown ([] when every type is resolved). The claims' statistics are
    monotone in each share, so these two ends give their extreme verdicts."""
    below = np.isin(found.classes, found.below_resolution())  # [K]
    if not below.any():
        return []
    ends = []
    for value in (np.zeros(len(found.classes)), share_bounds(found)):
        corrected, low, high = (np.where(below, value, v) for v in shares_of(found))
        ends.append((corrected, low, high))
    return ends


def bracket_note(found: CorrectedShares) -> str:
    """What the bracket of an unresolved share claim holds, in words ('' when resolved)."""
    bounds = share_bounds(found)
    below = [
        f"{k} between 0 and {bounds[i]:.2%}"
        for i, k in enumerate(found.classes)
        if k in found.below_resolution()
    ]
    if not below:
        return ""
    return (
        f"decided only where the verdict is the same with {', '.join(below)} (its observed "
        "share's upper bound over its recall's lower bound)"
    )
