"""The numbering rule's check: every layer or head number in a run's human-facing outputs (CSV
tables, metrics, figure captions, the report) is within 1..L / 1..H."""

from __future__ import annotations

import json
import numbers
import re
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

NAMED = re.compile(r"\bL(\d+)(?:-H(\d+))?\b")  # L3-H5, or a layer alone: L3
EMBEDDED = re.compile(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+")  # images inlined in the report


def _named_violations(text: str, layers: int, heads: int) -> Iterator[str]:
    for match in NAMED.finditer(text):
        layer, head = int(match.group(1)), match.group(2)
        if not 1 <= layer <= layers or (head is not None and not 1 <= int(head) <= heads):
            yield match.group(0)


def _is_layer_key(name: str) -> bool:
    return name == "layer" or name.endswith(("_layer", ".layer"))


def _is_head_key(name: str) -> bool:
    return name == "head" or name.endswith(("_head", ".head"))


def _number_violation(name: str, value: object, layers: int, heads: int) -> bool:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    if not float(value).is_integer():
        return False  # NaN, infinite or a fraction: a value, not a number (cls_entropy_last_layer)
    limit = layers if _is_layer_key(name) else heads if _is_head_key(name) else None
    return limit is not None and not 1 <= value <= limit


def table_violations(path: Path, layers: int, heads: int) -> list[str]:
    frame = pd.read_csv(path)
    found = []
    for column in frame.columns:
        values = frame[column].dropna()
        if pd.api.types.is_numeric_dtype(values):
            bad = [v for v in values.unique() if _number_violation(column, v, layers, heads)]
            found += [f"{path}: column {column} holds {v}" for v in bad[:3]]
        else:
            text = " ".join(map(str, values.unique()))
            found += [f"{path}: {column} names {n}" for n in _named_violations(text, layers, heads)]
    return found


def metrics_violations(path: Path, layers: int, heads: int) -> list[str]:
    found = []
    for key, value in json.loads(path.read_text()).items():
        if _number_violation(key, value, layers, heads):
            found.append(f"{path}: {key} = {value}")
        for name in [*_named_violations(key, layers, heads)] + (
            [*_named_violations(value, layers, heads)] if isinstance(value, str) else []
        ):
            found.append(f"{path}: {key} names {name}")
    return found


def numbering_violations(outputs: Path, layers: int, heads: int) -> list[str]:
    """Every layer/head number in a run's human-facing outputs outside 1..layers / 1..heads."""
    found: list[str] = []
    for path in sorted((outputs / "plots").rglob("*.csv")):
        found += table_violations(path, layers, heads)
    for path in sorted((outputs / "metrics").rglob("*.json")):
        found += metrics_violations(path, layers, heads)
    for path in sorted((outputs / "figures").rglob("*.json")):  # captions
        caption = json.loads(path.read_text()).get("caption", "")
        found += [f"{path}: {n}" for n in _named_violations(caption, layers, heads)]
    report = outputs / "report.html"
    if report.exists():
        text = EMBEDDED.sub("", report.read_text())
        found += [f"{report}: {n}" for n in _named_violations(text, layers, heads)]
    return found
