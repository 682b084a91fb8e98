"""The pattern shares' verdicts under emulated CPUs (benchmarks/emulated_cpu_shares.py): the
kept record shows no verdict flipping between supported and contradicted across the kernel
settings, and the table is built from each setting's shares with the claims' own rules."""

from __future__ import annotations

import pytest

from benchmarks.emulated_cpu_shares import (
    CLAIMS,
    DECIDED,
    KERNEL,
    RECORD,
    Setting,
    flips,
    git,
    moves,
    read_table,
    record,
    snapshot,
    table,
)
from pipeline.analyses.framenet.results import FramenetHeads
from pipeline.analyses.patterns_apply.results import PatternsApplyMetrics
from pipeline.claims.cases import SEED, interval
from pipeline.claims.outputs import SyntheticOutputs
from pipeline.core.results import Family
from pipeline.kovaleva.patterns import CLASSES, FIRST_THREE
from tests.support.paths import REPO

FIRST_THREE_CLAIM, HETEROGENEOUS_CLAIM, RECUR_CLAIM = (c.name for c in CLAIMS)


def planted(kernel: str, heterogeneous: float, half_width: float = 0.01) -> Setting:
    """A setting whose MRPC maps are `heterogeneous` (+- half_width) heterogeneous, the rest
    spread evenly over the other four types (+- 0.01 each), on a model of five heads."""
    rest = (1 - heterogeneous) / 4
    shares = {k: interval(rest, 0.01) for k in CLASSES} | {
        "heterogeneous": interval(heterogeneous, half_width)
    }
    first_three = interval(sum(shares[k].estimate for k in FIRST_THREE), 0.01)
    applied = PatternsApplyMetrics(
        shares=Family({"mrpc": Family(shares)}),
        vertical_on_special=Family({"mrpc": interval(0.5, 0.1)}),
        estimated=Family({"mrpc": Family(shares | {"first_three": first_three})}),
        max_share_change=0.01,
    )
    heads = FramenetHeads.of(score=[0.5] * 5, score_ci_low=[0.4] * 5, score_ci_high=[0.6] * 5)
    held = {(PatternsApplyMetrics, SEED): applied, (FramenetHeads,): heads}
    return Setting(kernel, 100.0, 1.5, 0.8, kernel == "native", SyntheticOutputs(held))


SETTINGS = [
    planted("native", 0.2),
    planted("mkl-sse42", 0.7),  # heterogeneous above half: the minority claim contradicted
    planted("aten-default", 0.5, half_width=0.05),  # straddles half: inconclusive
]


def test_each_row_judges_its_settings_shares_by_the_claims_rules():
    found = table(SETTINGS).set_index(KERNEL)
    assert list(found.index) == ["native", "mkl-sse42", "aten-default"]
    assert found.loc["native", "first three"] == "0.600 [0.590, 0.610]"
    assert found.loc["native", "heterogeneous"] == "0.200 [0.190, 0.210]"
    # the rarest type, 0.2 of five heads' maps: one head's worth
    assert found.loc["native", "rarest type, heads"] == "1.00 [0.95, 1.05]"
    assert found.loc["native", RECUR_CLAIM] == "inconclusive"  # straddles one head's worth
    assert found.loc["native", "weights"] == "the DVC run's"
    assert found.loc["mkl-sse42", "weights"] == "differ"
    assert list(found[HETEROGENEOUS_CLAIM]) == ["supported", "contradicted", "inconclusive"]
    assert found.loc["native", FIRST_THREE_CLAIM] == "supported"
    assert found.loc["mkl-sse42", FIRST_THREE_CLAIM] == "contradicted"  # 0.225 of the maps


def test_a_move_through_inconclusive_is_listed_and_only_supported_against_contradicted_flips():
    found = table(SETTINGS)
    moved = moves(found)
    assert (HETEROGENEOUS_CLAIM, "aten-default", "supported", "inconclusive") in moved
    assert (HETEROGENEOUS_CLAIM, "mkl-sse42", "supported", "contradicted") in moved
    assert all(m[1] != "native" for m in moved)
    flipped = flips(found)
    assert (HETEROGENEOUS_CLAIM, "mkl-sse42", "supported", "contradicted") in flipped
    assert all({m[2], m[3]} == set(DECIDED) for m in flipped)
    assert not [m for m in flipped if m[1] == "aten-default"]


def test_the_record_reads_back_as_the_table_it_was_written_from():
    found = table(SETTINGS)
    text = record(found, [s.kernel for s in SETTINGS], "0" * 64, "0123abc")
    assert read_table(text).equals(found)
    assert "not run: onednn-sse41" in text
    assert f"- {HETEROGENEOUS_CLAIM} under mkl-sse42: supported -> contradicted" in text


def test_the_kept_record_has_no_share_verdict_flipping_between_the_kernel_settings():
    text = RECORD.read_text()
    found = read_table(text)
    assert found[KERNEL].iloc[0] == "native" and len(found) >= 2, "native and an emulation"
    assert {c.name for c in CLAIMS} <= set(found.columns)
    assert flips(found) == [], f"a share verdict flips with the CPU: {flips(found)}"
    listed = [line for line in text.splitlines() if " under " in line and " -> " in line]
    assert len(listed) == len(moves(found)), "every move from native's verdict is listed"


@pytest.mark.slow  # extracts the whole commit
def test_the_settings_run_one_copy_of_heads_committed_files_with_the_prepared_data(tmp_path):
    prepared = REPO / "data" / "glue" / "mrpc"
    if not prepared.is_dir():
        pytest.skip("needs the DVC run's prepared MRPC data (dvc repro prepare)")
    commit = snapshot(tmp_path)
    assert commit == git("rev-parse", "--short", "HEAD").decode().strip()
    tracked = git("ls-tree", "-r", "--name-only", commit).decode().split("\n")
    copied = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    held = {f"data/glue/mrpc/{p.name}" for p in prepared.iterdir()}
    assert copied == {t for t in tracked if t} | held
    assert (tmp_path / "stages" / "patterns_apply.py").read_bytes() == git(
        "show", f"{commit}:stages/patterns_apply.py"
    )
