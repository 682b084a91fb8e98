"""An audit of a share round on another run (tools/share_audit.py): the labels per call set
side by side and tested, a call whose types differ on the other run found, and an audit
drawn by another stratifier refused."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from pipeline.kovaleva.patterns.labels import SAMPLE_COLUMNS
from tools import share_audit

LABEL_COLUMNS = ["map_id", "label", "source", "annotator", "labelled_on"]


def _round(root: Path, first: int, labels: list[tuple[str, str]], digest: str = "abc") -> Path:
    """A labelled round: one map per (call, label by eye) pair, two annotators agreeing."""
    root.mkdir()
    ids = [f"v{first + i}" for i in range(len(labels))]
    rows = [(i, "finetuned", "mrpc", n, 1, 1, 4, "vertical", 7, f"call:{call}@{digest}")
            for n, (i, (call, _)) in enumerate(zip(ids, labels, strict=True))]  # fmt: skip
    sample = pd.DataFrame(rows, columns=list(SAMPLE_COLUMNS)).assign(inclusion_probability=0.1)
    sample.to_csv(root / "sample.csv", index=False)
    marks = [(i, label, "visual", who, "2026-11-29")
             for i, (_, label) in zip(ids, labels, strict=True) for who in ("p", "q")]  # fmt: skip
    pd.DataFrame(marks, columns=LABEL_COLUMNS).to_csv(root / "visual.csv", index=False)
    return root


def test_a_call_whose_types_differ_on_the_other_run_is_found(tmp_path):
    same = [("vertical", "vertical")] * 30 + [("vertical", "heterogeneous")] * 5
    share_round = _round(tmp_path / "round", 1, same + [("diagonal", "diagonal")] * 20)
    audit = _round(tmp_path / "audit", 100, same + [("diagonal", "heterogeneous")] * 20)
    text = share_audit.audit_summary(audit, share_round)
    check = text.split("## Does a call's")[1]
    rows = {line.split(" | ")[0].strip("| "): line for line in check.splitlines() if "|" in line}
    assert float(rows["vertical"].split(" | ")[3]) > 0.5  # alike: no sign of a difference
    assert float(rows["diagonal"].split(" | ")[3]) < 0.001  # all diagonal against none


def test_an_audit_drawn_by_another_stratifier_is_refused(tmp_path, capsys):
    share_round = _round(tmp_path / "round", 1, [("vertical", "vertical")] * 3)
    audit = _round(tmp_path / "audit", 100, [("vertical", "vertical")] * 3, digest="def")
    with pytest.raises(SystemExit):
        share_audit.main([str(audit), "--round", str(share_round)])
    assert "draw the audit with the round's stratifier" in capsys.readouterr().err
