"""The registry's draft entry: a digest the last version does not record opens the next
version as a draft after a frozen one (its reason left to write), or replaces a draft's
digest; a recorded digest changes nothing. The ledger still parses after each."""

from __future__ import annotations

import shutil
from datetime import date

from pipeline.claims.draft_entry import REASON_TO_WRITE, open_draft
from pipeline.claims.registry import AMENDMENTS, versions

NEW = "ab" * 32  # a digest no version records


def _ledger(tmp_path):
    path = tmp_path / "amendments.yaml"
    shutil.copyfile(AMENDMENTS, path)
    return path


def test_a_frozen_last_version_gets_the_next_as_a_draft(tmp_path):
    path = _ledger(tmp_path)
    last = versions(path)[-1]
    assert last.status == "frozen"
    before = path.read_text()
    open_draft(NEW, path, date(2026, 12, 1))
    assert path.read_text().startswith(before)  # the frozen versions keep their bytes
    drafted = versions(path)[-1]
    assert (drafted.version, drafted.status, drafted.digest) == (last.version + 1, "draft", NEW)
    assert (drafted.date, drafted.seen_models) == (date(2026, 12, 1), last.seen_models)
    assert drafted.reason == REASON_TO_WRITE


def test_a_draft_gets_the_new_digest_in_place(tmp_path):
    path = _ledger(tmp_path)
    open_draft(NEW, path, date(2026, 12, 1))
    newer = "cd" * 32
    said = open_draft(newer, path, date(2026, 12, 2))
    found = versions(path)
    assert found[-1].digest == newer and found[-1].date == date(2026, 12, 1)
    assert len(found) == len(versions(AMENDMENTS)) + 1
    assert said == f"draft version {found[-1].version} now records digest {newer[:12]}"


def test_a_recorded_digest_changes_nothing(tmp_path):
    path = _ledger(tmp_path)
    before = path.read_bytes()
    said = open_draft(versions(path)[-1].digest, path)
    assert path.read_bytes() == before
    assert said.endswith("nothing to draft")
