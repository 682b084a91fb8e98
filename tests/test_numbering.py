"""One numbering rule: every human-facing output counts layers and heads from 1 (`L3-H5`).

`numbering_violations` reads a run's outputs (CSV tables, metrics, figure captions and the
report) and lists every layer or head number outside 1..L / 1..H. The slow end-to-end test
applies it to a whole micro run; the tests here show that it catches 0-based outputs.
"""

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


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_one_based_outputs_pass(tmp_path: Path) -> None:
    _write(tmp_path / "plots/ablate/rte/heads.csv", "layer,head,delta\n1,1,0.1\n2,4,0.0\n")
    _write(
        tmp_path / "metrics/ablate/rte.json",
        '{"best_head": "L2-H4", "best.layer": 2, "cls_entropy_last_layer": 3.9}',
    )
    _write(tmp_path / "figures/ablate/rte/fig8.json", '{"caption": "L1-H2 helps"}')
    _write(tmp_path / "report.html", '<img src="data:image/png;base64,iVBL0L555+/="> L2-H3')
    assert numbering_violations(tmp_path, layers=2, heads=4) == []


def test_zero_based_outputs_are_caught(tmp_path: Path) -> None:
    _write(tmp_path / "plots/ablate/rte/heads.csv", "layer,head,delta\n0,0,0.1\n1,3,0.0\n")
    _write(tmp_path / "plots/clark/heads.csv", "name,score\nL0-H2,0.3\n")
    _write(tmp_path / "metrics/clark.json", '{"cls_peak_layer": 0, "top.head": "L2-H5"}')
    _write(tmp_path / "figures/x/fig.json", '{"caption": "head L3-H1 of a 2-layer model"}')
    _write(tmp_path / "report.html", "<td>L0-H1</td>")
    found = numbering_violations(tmp_path, layers=2, heads=4)
    assert any("column layer holds 0" in f for f in found)
    assert any("column head holds 0" in f for f in found)
    assert any("L0-H2" in f for f in found)
    assert any("cls_peak_layer = 0" in f for f in found)
    assert any("L2-H5" in f for f in found)  # head 5 of 4: an off-by-one the other way
    assert any("L3-H1" in f for f in found)
    assert any("report.html: L0-H1" in f for f in found)
