"""Every committed claims table (the default run's, the standard reference's, the MPNet
run's) keeps each estimate inside its own interval, per claim and per seed, and every paper
row with a printed number has that number clear its rule by a unit of its last printed
digit. These read the committed tables: they hold once the tables are judged by the
current registry."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from pipeline.claims.readings import READING, finding_of
from pipeline.claims.registry import registered_claims
from pipeline.core.config import group_options
from tests.support.paths import REPO

TABLES = (
    Path("outputs/plots/claims"),
    Path("outputs/reference/standard"),
    Path("outputs/reference/mpnet_quick/plots/claims"),
)
FILES = [folder / name for folder in TABLES for name in ("claims.csv", "claims_by_seed.csv")]


@pytest.mark.parametrize("path", FILES, ids=str)
def test_no_estimate_lies_outside_its_interval(path):
    table = pd.read_csv(REPO / path).dropna(subset=["estimate", "ci_low", "ci_high"])
    outside = table[(table["estimate"] < table["ci_low"]) | (table["estimate"] > table["ci_high"])]
    found = [
        f"{r.claim}{f' (seed {r.seed})' if 'seed' in table else ''}: {r.estimate:.4g} "
        f"[{r.ci_low:.4g}, {r.ci_high:.4g}]"
        for r in outside.itertuples()
    ]
    assert not found, f"{path}: estimates outside their intervals: {found}"


@pytest.mark.parametrize("folder", TABLES, ids=str)
def test_every_printed_number_clears_the_rule_the_table_applied(folder):
    units = {c.name: c.source.unit for c in registered_claims() if c.source.number is not None}
    table = pd.read_csv(REPO / folder / "claims.csv")
    # a finding's readings carry its printed number, each on its own statistic
    papers = table[table["kind"].isin(("paper", "reading")) & table["paper_number"].notna()]
    short = []
    for r in papers.itertuples():
        distance = r.paper_number - r.threshold
        distance = -distance if r.side == "below" else distance
        if round(distance / units[r.claim], 6) < 1:
            short.append(f"{r.claim}: {r.paper_number:g} against {r.threshold:g} ({r.side})")
    assert not short, f"{folder}: paper numbers that do not clear their rule: {short}"


@pytest.mark.parametrize("folder", TABLES, ids=str)
def test_a_finding_on_the_pre_trained_model_is_one_row_per_table(folder):
    """A claim that reads no fine-tuned model (its `seeds` empty) measures the one
    pre-trained model: its inputs are pooled over the tasks, never one row per task."""
    table = pd.read_csv(REPO / folder / "claims.csv")
    tasks = set(group_options("task"))
    pretrained = table.loc[table["seeds"].isna(), "claim"]
    per_task = [c for c in pretrained if c.rpartition(".")[2] in tasks]
    assert not per_task, f"{folder}: pre-trained findings split by task: {per_task}"
    for family in ("clark.sep_in_middle_layers", "extension.same_layer_heads_alike"):
        assert (table["claim"] == family).sum() == 1, f"{folder}: {family}"


@pytest.mark.parametrize("folder", TABLES, ids=str)
def test_clarks_all_row_is_read_at_least_two_ways(folder):
    table = pd.read_csv(REPO / folder / "claims.csv")
    finding = "clark.no_head_does_syntax_overall"
    readings = table[(table["kind"] == READING) & (table["claim"].map(finding_of) == finding)]
    assert len(readings) >= 2, f"{folder}: {list(readings['claim'])}"
    assert (table["claim"] == finding).sum() == 1


SHARE_CLAIMS = (
    "kovaleva.types_recur.",
    "kovaleva.first_three_types_large_part.",
    "extension.heterogeneous_minority.",
)
# the framenet stage's heads file of each table's model (one row per head); the standard
# reference's model is the default run's
HEADS = {
    TABLES[0]: Path("outputs/plots/framenet/heads.csv"),
    TABLES[1]: Path("outputs/plots/framenet/heads.csv"),
    TABLES[2]: Path("outputs/reference/mpnet_quick/plots/framenet/heads.csv"),
}
NOT_LEARNED = "did not learn"
NO_ROUND = "estimated no share from a share round"  # a kept run's stores gone, or no round


def _share_rows(folder: Path) -> pd.DataFrame:
    table = pd.read_csv(REPO / folder / "claims.csv")
    return table[table["claim"].str.startswith(SHARE_CLAIMS)]


@pytest.mark.parametrize("folder", TABLES, ids=str)
def test_no_share_claim_is_untestable_for_want_of_labels(folder):
    """The default run's share rows are judged wherever its model learned the task; a kept
    run may lack the estimate (its attention stores are gone, or its model has no share
    round), and then its row says so."""
    rows = _share_rows(folder)
    allowed = (NOT_LEARNED,) if folder == TABLES[0] else (NOT_LEARNED, NO_ROUND)
    untested = rows[rows["verdict"] == "not testable"]
    bad = [
        f"{r.claim}: {r.reason}"
        for r in untested.itertuples()
        if not any(why in r.reason for why in allowed)
    ]
    assert len(rows) >= 9 and not bad, f"{folder}: share rows not testable: {bad}"


@pytest.mark.parametrize("folder", TABLES, ids=str)
def test_every_share_bound_lies_in_its_range(folder):
    """A share's bounds lie in [0, 1]; the types' smallest share in heads' worth in
    [0, heads]."""
    heads = len(pd.read_csv(REPO / HEADS[folder]))
    rows = _share_rows(folder).dropna(subset=["ci_low", "ci_high"])
    top = rows["claim"].str.startswith("kovaleva.types_recur.").map({True: heads, False: 1})
    outside = rows[(rows["ci_low"] < 0) | (rows["ci_high"] > top)]
    assert outside.empty, outside[["claim", "ci_low", "ci_high"]].to_string()
