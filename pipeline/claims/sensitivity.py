"""The claims table's sensitivity column, as the Markdown results and the HTML report both
print it: the verdicts at half and at double the claim's threshold."""

from __future__ import annotations

NO_SENSITIVITY = "—"  # a row with no verdict at a scaled threshold (not testable, undefined)


def threshold_sensitivity(threshold: float, half: object, double: object) -> str:
    """The verdicts at half / double the threshold, `(threshold 0)` where scaling 0 moves
    nothing, `NO_SENSITIVITY` where the row has no such verdicts."""
    if not isinstance(half, str):
        return NO_SENSITIVITY
    return "(threshold 0)" if threshold == 0 else f"{half} / {double}"
