"""The kept standard reference run (outputs/reference/standard): what its docs say of it holds
in its files, and its claims recompute from the inputs it keeps."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from pipeline.analyses.ablate.blocks import REMOVAL_FAMILIES as REMOVAL
from pipeline.claims.reference import rejudge
from tests.support.paths import REPO

STANDARD = REPO / "outputs" / "reference" / "standard"


def _claims() -> pd.DataFrame:
    return pd.read_csv(STANDARD / "claims.csv")


def test_the_standard_sweeps_scored_every_dev_row():
    prepared = json.loads((STANDARD / "prepare.json").read_text())
    for task in ("sst2", "mrpc", "rte", "stsb"):
        whole = prepared[f"{task}.validation.source_rows"]
        assert prepared[f"{task}.validation.rows"] == whole, task
        for seed in (42, 43, 44):
            rows = pd.read_csv(STANDARD / "plots/ablate" / task / f"seed{seed}/examples.csv")
            assert len(rows) == whole, (task, seed)


def test_no_removal_or_pruning_claim_is_decided_on_the_whole_dev_sets():
    """docs/stages/claims.md: with every dev row, each removal and pruning claim of the papers
    is inconclusive, underpowered (and then not decidable on its task) or not testable."""
    claims = _claims()
    removal = claims[
        claims["kind"].eq("paper") & claims["claim"].str.split(".").str[1].isin(REMOVAL)
    ]
    assert len(removal) == 7  # Michel's pruning and Voita's rows are extensions (registry v3)
    assert set(removal["verdict"]) <= {"inconclusive", "underpowered", "not testable"}
    underpowered = removal[removal["verdict"].eq("underpowered")]
    assert len(underpowered) > 0 and not underpowered["decidable"].astype(bool).any()
    untested = removal.loc[removal["verdict"].eq("not testable"), "claim"]
    assert sorted(untested) == sorted(  # RTE: learned in no seed
        c for c in removal["claim"] if c.endswith(".rte")
    )


@pytest.mark.slow
def test_the_kept_inputs_reproduce_the_claims_stage_files(tmp_path):
    """Judged again from what the folder keeps, the claims come out as the stage wrote them
    (`claims.csv` pools six-digit numbers: its numbers agree to the sixth digit)."""
    folder = tmp_path / "standard"
    shutil.copytree(STANDARD, folder)
    rejudge(folder, REPO / "outputs", "minilm_l6")
    for name in ("claims_by_seed.csv", "claims.json", "summary.txt", "results.md"):
        assert (folder / name).read_bytes() == (STANDARD / name).read_bytes(), name
    again, kept = pd.read_csv(folder / "claims.csv"), _claims()
    pd.testing.assert_frame_equal(again, kept, rtol=1e-5)


def test_a_remeasured_claim_whose_kept_inputs_no_longer_suffice_is_not_testable(tmp_path):
    """A share claim's statistic changed since the kept run: its kept numbers are not the
    claim's any more, so where its measure cannot run on the kept files it is not testable
    with the reason, never judged on the kept numbers."""
    from pipeline.analyses.patterns_apply.claims import types_recur
    from pipeline.claims.reference import KeptOutputs, kept_measurement

    kept = pd.DataFrame(
        {"claim": ["kovaleva.types_recur.mrpc"], "seed": [42], "estimate": [0.0],
         "ci_low": [-2.0], "ci_high": [-0.5]}
    )  # fmt: skip
    measured = kept_measurement(types_recur("mrpc"), KeptOutputs(tmp_path, tmp_path), kept, 42)
    assert measured.undefined
    assert measured.note.endswith("keeps no patterns_apply/seed42.json; rerun the profile")
