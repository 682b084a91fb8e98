"""The claims-across-models table beside the report's claims section: each model's column
named with the claims registry that judged it (version and date, from the table's runs.csv),
and marked out of date where that is not the registry that judged the claims section, or,
for the model this run ran, where a claim's verdict differs from the claims section's. The
mark names the command that refreshes the table (`python -m pipeline.claims.across_models`),
so the page never shows two verdict sets for one model without saying which is current."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

REFRESH = "python -m pipeline.claims.across_models"


@dataclass(frozen=True)
class Column:
    """One model's column of the table: its registry as runs.csv records it (version None
    for a table written before runs.csv recorded it), whether that is the claims section's
    registry, and, for the model this run ran, the claims both sections judged and how many
    of them have another verdict."""

    model: str
    version: int | None
    date: str
    same_registry: bool
    shared: int = 0
    differing: int = 0

    @property
    def out_of_date(self) -> bool:
        return not self.same_registry or self.differing > 0

    def label(self) -> str:
        """`registry v7, 2026-11-27`, or that runs.csv does not say."""
        if self.version is None:
            return "registry version not recorded in runs.csv"
        return f"registry v{self.version}" + (f", {self.date}" if self.date else "")

    def why(self, claims_version: int | None) -> str:
        """Why the column is out of date, in words (empty when it is not)."""
        reasons = []
        if not self.same_registry:
            section = f"v{claims_version}" if claims_version is not None else "another"
            reasons.append(f"{self.label()}, the claims section {section}")
        if self.differing:
            reasons.append(
                f"{self.differing} of {self.shared} shared claims' verdicts differ from the "
                "claims section's"
            )
        return f"{self.model} ({'; '.join(reasons)})" if reasons else ""


def _registry(frame: pd.DataFrame | None) -> tuple[int | None, str]:
    """The (version, digest) of the registry a claims table or a runs.csv row names."""
    if frame is None or frame.empty or "registry_digest" not in frame:
        return None, ""
    first = frame.iloc[0]
    if pd.isna(first["registry_digest"]):
        return None, ""
    return int(first["registry_version"]), str(first["registry_digest"])


def columns(
    across: pd.DataFrame, runs: pd.DataFrame | None, claims: pd.DataFrame | None, model: str
) -> list[Column]:
    """The state of each model's column of `across` (the claim x model table), from its row
    of `runs` (runs.csv), against the claims section's table `claims` of this run, whose
    model is `model`. With no claims section there is nothing to be out of date against."""
    models = [c.removesuffix(".verdict") for c in across.columns if c.endswith(".verdict")]
    own_version, own_digest = _registry(claims)
    found = []
    for name in models:
        row = runs[runs["model"] == name] if runs is not None else None
        version, digest = _registry(row)
        date = row.iloc[0].get("registry_date") if version is not None else None
        same = claims is None or (digest == own_digest and version == own_version)
        shared = differing = 0
        if claims is not None and name == model:
            theirs = across.set_index("claim")[f"{name}.verdict"].dropna()
            ours = claims.set_index("claim")["verdict"]
            both = theirs.index.intersection(ours.index)
            shared, differing = len(both), int((theirs[both] != ours[both]).sum())
        date = "" if date is None or pd.isna(date) else str(date)
        found.append(Column(name, version, date, same, shared, differing))
    return found


def refresh(runs: pd.DataFrame | None) -> str:
    """The command that rebuilds the table from the same experiments (runs.csv), as a
    sentence; a runs.csv that does not record the controls says to name them."""
    if runs is None or runs.empty:
        return f"`{REFRESH} <experiment> ...` refreshes the table."
    command = " ".join([REFRESH, *map(str, runs["experiment"])])
    if "control" not in runs:
        return (
            f"`{command}` refreshes the table (add `--control <experiment>` for a random "
            "model's: this runs.csv does not record which it was)."
        )
    controls = runs.loc[runs["control"].astype(bool), "experiment"]
    return f"`{' '.join([command, *(f'--control {c}' for c in controls)])}` refreshes the table."


def notice(found: list[Column], runs: pd.DataFrame | None, claims: pd.DataFrame | None) -> str:
    """What the section says first where a column is out of date (empty where none is)."""
    stale = [c.why(_registry(claims)[0]) for c in found if c.out_of_date]
    if not stale:
        return ""
    return f"Out of date beside the claims section: {'; '.join(stale)}. {refresh(runs)}"
