"""The report gives one verdict set per model (pipeline/report/across.py): a column of the
claims across models that is judged by another registry than the claims section, or that
shows another verdict than the claims section for the model this run ran, is marked out of
date, with its registry version and date and the command that refreshes the table."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from pipeline.claims.registry import versions
from pipeline.report.html import Run, render_report
from tests.support.paths import REPO

PLOTS = REPO / "outputs" / "plots"
MODEL = "minilm_l6"


def _section(page: str, name: str) -> str:
    return page[page.index(f'<section id="{name}">') :].split("</section>", 1)[0]


def shown_verdicts(page: str) -> tuple[dict[str, str], dict[str, str], bool]:
    """The claims section's verdict per claim; the across-models section's for MODEL; and
    whether MODEL's heading there is marked out of date (verdicts as their cells' classes)."""
    claims = dict(
        re.findall(r'· ([\w.:<>-]+)</span></td>.*?<td class="([\w-]+)">', _section(page, "claims"))
    )
    across = _section(page, "across_models")
    headings = re.findall(r"<th>([^<]+)(?:<span[^>]*>([^<]*)</span>)?</th>", across)
    index = [name for name, _ in headings].index(MODEL) - 2  # after claim and paper
    marked = "out of date" in dict(headings)[MODEL]
    shown = {}
    for claim, cells in re.findall(r'<tr><td>([^<]+)<span class="meta">.*?</td><td>[^<]*</td>'
                                   r"(.*?)</tr>", across):  # fmt: skip
        verdict = re.findall(r'<td(?: class="([\w-]+)")?>', cells)[index]
        if verdict:
            shown[claim] = verdict
    return claims, shown, marked


def unmarked_disagreements(page: str) -> list[str]:
    """The claims whose verdict for this run's model differs between the two sections while
    the across-models column is not marked out of date."""
    claims, shown, marked = shown_verdicts(page)
    differ = sorted(c for c in shown.keys() & claims.keys() if shown[c] != claims[c])
    return [] if marked else differ


@pytest.fixture
def outputs(tmp_path) -> Path:
    """The committed claims table and claims across models, nothing else."""
    for name in ("claims/claims.csv", "across_models/claims.csv", "across_models/runs.csv"):
        (tmp_path / "plots" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PLOTS / name, tmp_path / "plots" / name)
    return tmp_path


def _page(outputs: Path) -> str:
    return render_report(outputs, "run", "", Run(frozenset(), frozenset(), frozenset(), MODEL))


def _this_runs_column(outputs: Path, flipped: str = "") -> str:
    """MODEL's column made the claims section's own verdicts, judged by its registry, with
    claim `flipped`'s verdict changed; returns the new verdict's class."""
    claims = pd.read_csv(outputs / "plots/claims/claims.csv").set_index("claim")
    across = pd.read_csv(outputs / "plots/across_models/claims.csv")
    verdicts = across["claim"].map(claims["verdict"])
    other = "contradicted" if claims.loc[flipped or claims.index[0], "verdict"] != (
        "contradicted") else "supported"  # fmt: skip
    if flipped:
        verdicts[across["claim"] == flipped] = other
    across[f"{MODEL}.verdict"] = verdicts
    across.to_csv(outputs / "plots/across_models/claims.csv", index=False)
    runs = pd.read_csv(outputs / "plots/across_models/runs.csv")
    first = claims.iloc[0]
    dates = {v.digest: v.date.isoformat() for v in versions()}
    mine = runs["model"] == MODEL
    for key in ("registry_version", "registry_status", "registry_digest"):
        runs.loc[mine, key] = first[key]
    runs.loc[mine, "registry_date"] = dates.get(first["registry_digest"], "")
    runs.to_csv(outputs / "plots/across_models/runs.csv", index=False)
    return other.replace(" ", "-")


def test_the_committed_report_never_shows_two_verdicts_for_this_runs_model_unmarked(outputs):
    assert unmarked_disagreements(_page(outputs)) == []


def test_a_column_of_this_run_judged_by_its_registry_and_agreeing_is_not_marked(outputs):
    _this_runs_column(outputs)
    page = _page(outputs)
    claims, shown, marked = shown_verdicts(page)
    assert shown and all(claims[c] == v for c, v in shown.items() if c in claims)
    assert not marked
    version = int(pd.read_csv(outputs / "plots/claims/claims.csv")["registry_version"].iloc[0])
    assert f'{MODEL}<span class="meta">registry v{version}, ' in page


def test_a_verdict_that_differs_from_the_claims_section_marks_the_column(outputs):
    claim = pd.read_csv(outputs / "plots/across_models/claims.csv")["claim"].iloc[3]
    shown_class = _this_runs_column(outputs, claim)
    page = _page(outputs)
    claims, shown, marked = shown_verdicts(page)
    assert shown[claim] == shown_class != claims[claim]  # the two sections disagree
    assert marked and unmarked_disagreements(page) == []
    assert "1 of " in _section(page, "across_models") and "refreshes the table" in page


def test_another_registry_is_named_with_its_version_date_and_the_command(outputs):
    runs = pd.read_csv(outputs / "plots/across_models/runs.csv")
    runs["control"] = runs["experiment"].str.contains("control")
    runs["registry_version"], runs["registry_status"] = 1, "frozen"
    runs["registry_digest"] = versions()[0].digest
    runs["registry_date"] = versions()[0].date.isoformat()
    runs.to_csv(outputs / "plots/across_models/runs.csv", index=False)
    section = _section(_page(outputs), "across_models")
    assert f"registry v1, {versions()[0].date.isoformat()} · out of date" in section
    command = " ".join(
        ["python -m pipeline.claims.across_models", *runs["experiment"]]
        + [f"--control {e}" for e in runs.loc[runs["control"], "experiment"]]
    )
    assert f"<code>{command}</code> refreshes the table" in section
    assert section.index('class="notice"') < section.index("<table")
