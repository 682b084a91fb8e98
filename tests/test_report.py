"""The HTML report: figures with captions, tables and metrics, all inline, stages in order."""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import pandas as pd

from pipeline.io import save_figure, write_json, write_table
from pipeline.report import render_report


def test_report_embeds_everything_offline(tmp_path):
    figure, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    save_figure(tmp_path / "figures" / "framenet" / "fig3.png", figure, "FN caption", {"k": 7})
    figure, _ = plt.subplots()
    save_figure(tmp_path / "figures" / "analyze" / "rte" / "fig5.png", figure, "Cosine caption")
    write_table(
        tmp_path / "plots" / "analyze" / "rte" / "cosine.csv", pd.DataFrame({"v": range(30)})
    )
    write_json(tmp_path / "metrics" / "framenet.json", {"top_score": 0.19375})
    page = render_report(tmp_path, "Title", "seed: 42")
    assert page.count("data:image/png;base64,") == 2
    assert "<script" not in page and "http" not in page.replace("<!doctype html>", "")
    assert "FN caption" in page and "k=7" in page and "Cosine caption" in page
    assert page.index("Cosine caption") < page.index("FN caption")  # analyze before framenet
    assert "first 25 of 30 rows" in page and "top_score=0.1938" in page
    assert "seed: 42" in page


def test_missing_stages_are_absent(tmp_path):
    page = render_report(tmp_path, "Empty", "")
    assert "<h2>" not in page and json.dumps("Empty")[1:-1] in page
