"""One numbering rule: every human-facing output counts layers and heads from 1 (`L3-H5`).

`numbering_violations` reads a run's outputs (CSV tables, metrics, figure captions and the
report) and lists every layer or head number outside 1..L / 1..H. The slow end-to-end test
applies it to a whole micro run; the tests here show that it catches 0-based outputs.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.numbering import numbering_violations


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
