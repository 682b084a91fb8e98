"""A finding whose paper sentence admits more than one reading: each reading is a claim row
of its own (`Claim.reading`, the last part of its name; kind `reading`), and the finding
gets one row more, before them, with the verdict its readings give together. Only that
finding row counts among the papers' findings.

The finding is decided only when its readings agree:
- every reading `supported` (or every one `contradicted`): that verdict;
- one `supported` and another `contradicted`: `reading-dependent` (the data decide each
  reading, the paper's words do not say which one it meant);
- one decided and another straddling its threshold: `inconclusive`;
- none decided: `underpowered` when every reading is, else `inconclusive`;
- a reading `seed-dependent`: `seed-dependent`;
- a reading `not testable`: `not testable`, with its reason (agreement cannot be checked).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from pipeline.claims.rules import Verdict

READING = "reading"  # the kind of a reading's row
DECIDED = ("supported", "contradicted")


def finding_of(claim: str) -> str:
    """The finding a reading's row belongs to: its name without the reading."""
    return claim.rpartition(".")[0]


def combined(verdicts: Mapping[str, Verdict], reasons: Mapping[str, str]) -> tuple[Verdict, str]:
    """The finding's verdict from its readings' (`verdicts` and `reasons` by reading name),
    and the reason: each reading's verdict (module docstring)."""
    said = "; ".join(f"{name}: {verdict}" for name, verdict in verdicts.items())
    untestable = [n for n, v in verdicts.items() if v == "not testable"]
    if untestable:
        return "not testable", "; ".join(f"{n}: not testable ({reasons[n]})" for n in untestable)
    kinds = set(verdicts.values())
    if "seed-dependent" in kinds:
        return "seed-dependent", said
    decided = kinds & set(DECIDED)
    if decided == set(DECIDED):
        return "reading-dependent", said
    if decided and kinds == decided:
        return next(iter(decided)), said
    if kinds == {"underpowered"}:
        return "underpowered", said
    return "inconclusive", said


def with_findings(table: pd.DataFrame, kinds: Mapping[str, str]) -> pd.DataFrame:
    """`table` with a finding row before the first reading row (kind READING) of each
    finding; `kinds`: the kind (paper, extension) each finding counts as."""
    records = table.to_dict("records")
    readings: dict[str, list[dict]] = {}
    for row in records:
        if row["kind"] == READING:
            readings.setdefault(finding_of(row["claim"]), []).append(row)
    rows: list[dict] = []
    for row in records:
        name = finding_of(row["claim"]) if row["kind"] == READING else None
        if name in readings:
            rows.append(finding_row(name, readings.pop(name), kinds[name], list(table.columns)))
        rows.append(row)
    return pd.DataFrame(rows, columns=table.columns)


def finding_row(name: str, readings: list[dict], kind: str, columns: list[str]) -> dict:
    """The finding's row: its source and statement from its readings, their verdicts
    combined, and no statistic of its own (each reading has its own)."""
    reading = {r["claim"].rpartition(".")[2]: r for r in readings}
    verdict, reason = combined(
        {n: r["verdict"] for n, r in reading.items()}, {n: r["reason"] for n, r in reading.items()}
    )
    first = readings[0]
    return dict.fromkeys(columns, math.nan) | {
        "claim": name,
        "kind": kind,
        "source": first["source"],
        "statement": first["statement"],
        "paper_number_note": "",
        "finding": f"{first['statement']} (read {len(reading)} ways: {', '.join(reading)})",
        "statistic": "each reading's own (rows below)",
        "seeds_used": "",
        "verdict": verdict,
        "reason": reason,
        "note": "",
        "power_effect_source": "",
        "threshold_reason": "decided only when its readings agree",
        "rule": "its readings agree",
        "side": "",
    }


def shown_with(table: pd.DataFrame, kind: str) -> pd.DataFrame:
    """The rows of `kind` (paper, extension) with each finding's reading rows after it, in
    the table's order: what a table of that kind shows (its counts read `kind` rows alone)."""
    findings = set(table.loc[table["kind"] == kind, "claim"])
    readings = (table["kind"] == READING) & table["claim"].map(finding_of).isin(findings)
    return table[(table["kind"] == kind) | readings]
