"""The claims registry: its digest covers what the claims say (not the code), the committed
claims are the last recorded version, and a malformed amendments file fails in one line."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pipeline.analyses.clark_syntax.claims import RELATION
from pipeline.claims.draft_entry import REASON_TO_WRITE
from pipeline.claims.evaluate import all_claims
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.provides import lent
from pipeline.claims.registry import (
    AMENDMENTS,
    claim_spec,
    digest,
    digest_of,
    mismatch,
    record_draft,
    registered_claims,
    registration,
    registry_parts,
    versions,
    what_moved,
)
from pipeline.claims.rules import Beyond
from pipeline.claims.thresholds import Threshold
from pipeline.core.errors import PipelineError
from tests.support.paths import REPO


def test_the_claims_are_the_last_recorded_version():
    """Fails when a claim (a threshold, a statement, a rule) changes without an amendment,
    naming what moved against the last version's record (test_registry_diff.py)."""
    parts = registry_parts()
    current = digest_of(parts)
    why = mismatch(current, changes=what_moved(parts) if mismatch(current) else ())
    assert not why, why


def test_the_digest_follows_what_a_claim_says_not_its_code():
    claims = all_claims(StageOutputs(REPO / "outputs"), ("sst2",))
    first = claims[0]
    recoded = dataclasses.replace(first, measure=lambda out, seed: None)
    assert digest([recoded, *claims[1:]]) == digest(claims)
    assert digest(list(reversed(claims))) == digest(claims)  # order is no part of it
    moved = Threshold(0.02, first.rule.threshold.reason, first.rule.threshold.from_paper)
    edited = dataclasses.replace(first, rule=Beyond(moved, side=first.rule.side))
    assert digest([edited, *claims[1:]]) != digest(claims)
    reworded = dataclasses.replace(
        first, source=dataclasses.replace(first.source, statement="something else")
    )
    assert digest([reworded, *claims[1:]]) != digest(claims)


ENTRY = """- version: {version}
  date: 2026-11-25
  status: {status}
  digest: {digest}
  seen_models: [minilm_l6]
  reason: a reason
"""


def _amendments(tmp_path: Path, *entries: tuple[int, str, str]) -> Path:
    path = tmp_path / "amendments.yaml"
    path.write_text("".join(ENTRY.format(version=v, status=s, digest=d) for v, s, d in entries))
    return path


def test_a_frozen_version_asks_for_an_amendment_and_a_draft_for_its_digest(tmp_path):
    frozen = _amendments(tmp_path, (1, "frozen", "aaa"))
    assert "add version 2" in mismatch("bbb", frozen)
    with pytest.raises(PipelineError, match="version 1 is frozen: add version 2"):
        record_draft("bbb", frozen)
    draft = _amendments(tmp_path, (1, "frozen", "aaa"), (2, "draft", "ccc"))
    assert "record it" in mismatch("bbb", draft)
    record_draft("bbb", draft)
    assert versions(draft)[-1].digest == "bbb" and versions(draft)[0].digest == "aaa"


def test_verdicts_are_registered_only_on_a_frozen_version_and_an_unseen_model(tmp_path):
    path = _amendments(tmp_path, (1, "frozen", "aaa"), (2, "draft", "ccc"))
    assert registration("aaa", "bert_base_uncased", path).mark == "registered"
    assert registration("aaa", "minilm_l6", path).mark == "fitted"  # seen before freezing
    assert registration("ccc", "bert_base_uncased", path).mark == "fitted"  # a draft
    unrecorded = registration("ddd", "bert_base_uncased", path)
    assert (unrecorded.status, unrecorded.mark, unrecorded.version) == ("unrecorded", "fitted", 2)
    assert registration("aaa", "x", path).metrics()["registry.version"] == 1


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        (((1, "draft", "a"), (2, "frozen", "b")), "version 1 is a draft but not the last"),
        (((2, "frozen", "a"),), "numbered 2, expected 1"),
        (((1, "sealed", "a"),), "status 'sealed'"),
    ],
)
def test_a_malformed_amendments_file_fails_in_one_line(tmp_path, entries, message):
    with pytest.raises(PipelineError, match=message):
        versions(_amendments(tmp_path, *entries))


def test_a_version_frozen_before_its_reason_was_written_fails_in_one_line(tmp_path):
    path = _amendments(tmp_path, (1, "draft", "a"))
    path.write_text(path.read_text().replace("a reason", f'"{REASON_TO_WRITE}"'))
    assert versions(path)[0].status == "draft"  # a draft may wait for its reason
    path.write_text(path.read_text().replace("status: draft", "status: frozen"))
    with pytest.raises(PipelineError, match="version 1 is frozen with the draft's place-holder"):
        versions(path)


def test_an_amendments_file_that_is_not_yaml_fails_in_one_line(tmp_path):
    path = _amendments(tmp_path, (1, "draft", "a"))
    path.write_text(path.read_text().replace("a reason", "why: a colon"))
    with pytest.raises(PipelineError, match=r"not valid YAML \(line 6\); quote a reason"):
        versions(path)


def test_the_committed_amendments_file_reads():
    found = versions(AMENDMENTS)
    assert [v.version for v in found] == list(range(1, len(found) + 1))
    assert "minilm_l6" in found[0].seen_models  # MiniLM's results came before the rules


def test_every_claim_of_a_run_is_registered_by_name_or_as_the_relation_template():
    """A run's claims (here the committed outputs') are the registry's, whatever relations its
    syntax stage scored: each is registered under its own name, or is the per-relation row,
    equal to its registered template but for the relation's name."""
    registered = {c.name: claim_spec(c) for c in registered_claims()}
    template = registered["extension.head_beats_offset." + RELATION.template()]
    run = all_claims(StageOutputs(REPO / "outputs"), lent().tasks)
    relation_rows = [c for c in run if c.name not in registered]
    assert len(relation_rows) >= 5  # the committed run scores UD relations outside Table 1
    for claim in relation_rows:
        relation = claim.name.removeprefix("extension.head_beats_offset.")
        assert claim.name != relation, f"{claim.name} is not registered"
        assert {**claim_spec(claim), "id": template["id"]} == template, relation
