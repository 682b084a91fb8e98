"""When the registry's digest moves, its failure names what moved against the record of the
last version's parts (pipeline/claims/registry_record.json): which claims' specs, which
measurement pins and which verdict pins changed, each with its old and new value."""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest

from pipeline.analyses.framenet import claims as framenet_claims
from pipeline.claims.registry import (
    AMENDMENTS,
    NAMED,
    RECORD,
    digest_of,
    mismatch,
    moved,
    read_record,
    record_last,
    registry_parts,
    versions,
    what_moved,
    write_record,
)
from pipeline.core.errors import PipelineError


@pytest.fixture(scope="module")
def recorded() -> dict:
    return read_record()


def test_the_record_holds_the_last_versions_parts(recorded):
    last = versions(AMENDMENTS)[-1]
    assert digest_of(recorded) == last.digest, (
        f"{RECORD.name} is not the record of version {last.version}'s digest; rewrite it with "
        "`python -m pipeline.claims.registry --record`"
    )


FROZEN = """- version: 1
  date: 2026-11-25
  status: frozen
  digest: {digest}
  reason: the parts as the code declares them
"""


def test_a_moved_threshold_fails_naming_the_claim_and_both_values(tmp_path, monkeypatch):
    """Against a record and a frozen version of the parts as declared now (so a claim change
    under way elsewhere moves nothing here), one claim's threshold moved names that claim and
    both values, and nothing else. The fixture's measurements are left out (`claims=[]`), to
    keep it fast: what it names is a claim's spec."""
    record, amendments = tmp_path / RECORD.name, tmp_path / AMENDMENTS.name
    declared = registry_parts(claims=[])
    write_record(declared, record)
    amendments.write_text(FROZEN.format(digest=digest_of(declared)))
    old = framenet_claims.SET_APART
    monkeypatch.setattr(framenet_claims, "SET_APART", dataclasses.replace(old, value=0.3))
    parts = registry_parts(claims=[])
    message = mismatch(digest_of(parts), amendments, changes=what_moved(parts, record))
    assert "a registered claim changed; add version 2" in message.splitlines()[0]
    assert message.splitlines()[1:] == [
        f"  claim kovaleva.framenet_heads_stand_out: threshold {old.value:g} -> 0.3"
    ], message


def test_measurement_and_verdict_pins_are_named_with_both_values(recorded):
    current = copy.deepcopy(recorded)
    claim = next(iter(current["fixture"]))
    current["fixture"][claim][0] = "0.123"
    case = next(iter(current["verdicts"]))
    current["verdicts"][case][0] = "moved"
    folder, files = next(iter(current["labels"].items()))
    label_file = next(iter(files))
    files[label_file] = "0" * 64
    del current["gates"][next(iter(current["gates"]))]
    spec_id = next(iter(current["claims"]))
    current["claims"][spec_id]["statement"] = "something else"
    lines = moved(recorded, current)
    was = recorded["fixture"][claim]
    assert f"measurement pin fixture {claim}: {json.dumps(was)} -> " in "\n".join(lines)
    assert f'verdict pin verdicts {case}: ["{recorded["verdicts"][case][0]}", ' in "\n".join(lines)
    assert any(line.startswith(f"measurement pin labels {folder}.{label_file}: ") for line in lines)
    assert any(
        line.startswith("verdict pin gates ") and line.endswith(": removed") for line in lines
    )
    assert any(
        line.startswith(f"claim {spec_id}: statement ") and line.endswith('-> "something else"')
        for line in lines
    )
    assert len(lines) == 5  # nothing else moved
    assert {line.split(" ")[0] for line in lines} == {"claim", "measurement", "verdict"}


def test_a_long_list_is_cut_with_the_command_that_lists_it(recorded):
    current = copy.deepcopy(recorded)
    for row in current["verdicts"].values():
        row[0] = "moved"
    changes = ["against the record", *moved(recorded, current)]
    message = mismatch(digest_of(current), changes=changes).splitlines()
    assert len(message) == 1 + NAMED + 1
    assert message[-1].endswith("more (`python -m pipeline.claims.registry` lists them all)")


def test_the_record_is_written_only_for_the_last_versions_digest(tmp_path, recorded):
    record = tmp_path / "registry_record.json"
    record_last(recorded, AMENDMENTS, record)
    assert read_record(record) == recorded
    other = {**recorded, "gates": {}}
    with pytest.raises(PipelineError, match=r"is not version .*record the digest first"):
        record_last(other, AMENDMENTS, record)


@pytest.mark.parametrize("text", ["{", '{"claims": {}}'])
def test_a_malformed_record_fails_in_one_line(tmp_path, text):
    record = tmp_path / "registry_record.json"
    record.write_text(text)
    with pytest.raises(PipelineError, match=r"--record`$") as raised:
        read_record(record)
    assert "\n" not in str(raised.value)


def test_a_record_older_than_the_profile_pins_reads_and_names_them_added(tmp_path, recorded):
    older = {part: items for part, items in recorded.items() if part != "profiles"}
    record = tmp_path / "registry_record.json"
    record.write_text(json.dumps(older))
    assert read_record(record) == older
    current = {**copy.deepcopy(older), "profiles": {"standard": {"seeds": [42, 43, 44]}}}
    assert moved(older, current) == ["measurement pin profiles standard: added"]
    changed = copy.deepcopy(current)
    changed["profiles"]["standard"]["seeds"] = [42]
    assert moved(current, changed) == [
        "measurement pin profiles standard.seeds: [42, 43, 44] -> [42]"
    ]
