"""The claims registry: a version and a digest of every registered claim, and the dated
amendments that change it.

The digest (version 3 on) is the SHA-256 of a canonical JSON (sorted keys, no whitespace)
of its parts. What the claims say (`digest`): each claim's id, the paper's statement, its
source (paper, place, printed number), the statistic, the rule's name and parameters (with
the power check's effect and the room a removal claim needs), the threshold, and the
claim-relevant settings by key (the SETTINGS beside each analysis's claims,
measurement_pins.settings_by_family: label folders, example counts, the classifier's
settings, the gates' inputs), as conf/ composes them under each profile a
committed table is judged under (measurement_pins.PROFILES, from version 6 on), over the
claims declared for every task of Kovaleva et al.'s Table 1 (`REGISTRY_TASKS`). How they
are measured: the visual labels the pattern classifier learns from
(measurement_pins.label_pins, from version 5 on), and every statistic's output on a small
committed fixture (measurement_pins.fixture_outputs). And how measurements become verdicts
(from version 6 on): the verdicts, pooled intervals and power figures of a synthetic grid of
per-seed statistics, and the gates' answers on a synthetic grid of margins
(verdict_pins.verdict_grid, gate_grid).
The extension row a run adds for each UD relation outside Clark's Table 1 is one template,
registered once with the relation `RELATION` in its name: which relations a run scores
depends on its data, never on the registry. It hashes no code and no run's outputs, so
moving or renaming code leaves it alone and every model's run shares it; a change to a
claim's words, threshold, settings, labels, measured behaviour, or the way seeds, rules,
`settle`, the power check and the gates turn measurements into verdicts moves it.

`amendments.yaml` beside this file lists the registry's versions, oldest first, each with
its date, status (`draft` or `frozen`), digest, the models whose results had been seen when
its rules were written (`seen_models`) and its reason. Only the last version may be a
draft. A frozen version is never edited: changing a registered claim adds a version with its
date and reason. tests/claims/test_registry.py fails when the digest of the claims differs
from the last version's.

A verdict is `registered` when the run's claims are exactly a frozen version's and the
run's model is not among that version's `seen_models`; otherwise it is `fitted` (its model's
results, or the results of the draft's time, were seen before the rules were fixed).

    python -m pipeline.claims.registry            # the digest, and whether it is recorded
    python -m pipeline.claims.registry --draft    # record it in the draft version
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from pipeline.analyses.table1.claims import TABLE1
from pipeline.claims.claim import Claim
from pipeline.claims.evaluate import declared_claims
from pipeline.claims.measurement_pins import (
    FIXTURE,
    FIXTURE_TASKS,
    fixture_outputs,
    fixture_relations,
    label_pins,
    settings,
)
from pipeline.claims.thresholds import Threshold
from pipeline.claims.verdict_pins import gate_grid, verdict_grid
from pipeline.core.errors import PipelineError, exit_on_error
from pipeline.core.io import write_text

AMENDMENTS = Path(__file__).with_name("amendments.yaml")
REGISTRY_TASKS: tuple[str, ...] = tuple(TABLE1)  # every task of Kovaleva et al.'s Table 1
RELATION = "<relation>"  # the per-relation extension row's place-holder (module docstring)
STATUSES = ("draft", "frozen")


def claim_spec(claim: Claim) -> dict[str, Any]:
    """What the digest covers of one claim (module docstring)."""
    source = claim.source
    return {
        "id": claim.name,
        "statement": source.statement,
        "source": {"paper": source.paper, "where": source.where, "number": source.number},
        "statistic": claim.statistic,
        "rule": {
            "name": type(claim.rule).__name__,
            "parameters": _parameters(claim.rule),
            "effect": claim.effect,
            "headroom": claim.headroom,
        },
        "threshold": claim.rule.threshold.value,
        "settings": settings(claim),
    }


def _parameters(rule: object) -> dict[str, Any]:
    """A rule's dataclass fields but its threshold (hashed apart, by value)."""
    return {
        f.name: getattr(rule, f.name)
        for f in dataclasses.fields(rule)  # type: ignore[arg-type]
        if not isinstance(getattr(rule, f.name), Threshold)
    }


def _plain(value: object) -> object:
    """A rule parameter JSON does not know: a threshold by its value, another dataclass by
    its fields."""
    if isinstance(value, Threshold):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(f"a claim's rule parameter {value!r} has no canonical JSON form")


def digest(claims: Sequence[Claim]) -> str:
    """SHA-256 of the canonical JSON of the claims' specs, in id order."""
    specs = sorted((claim_spec(c) for c in claims), key=lambda spec: spec["id"])
    text = json.dumps(
        specs, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=_plain
    )
    return hashlib.sha256(text.encode()).hexdigest()


def registered_claims() -> list[Claim]:
    """Every claim of the registry: those declared for every task of Kovaleva et al.'s
    Table 1, the per-relation extension row once, as its template."""
    return declared_claims(REGISTRY_TASKS, (RELATION,))


def registry_digest(claims: Sequence[Claim] | None = None, fixture: Path = FIXTURE) -> str:
    """The registry's digest (module docstring): what the registered claims say, the labels
    the pattern classifier learns from, and what the claims of the fixture's tasks measure
    on it (`claims`, for a test: those claims, declared otherwise)."""
    measured = (
        claims if claims is not None else declared_claims(FIXTURE_TASKS, fixture_relations(fixture))
    )
    parts = {
        "claims": digest(registered_claims()),
        "labels": label_pins(),
        "fixture": fixture_outputs(list(measured), fixture),
        "verdicts": verdict_grid(),
        "gates": gate_grid(),
    }
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Version:
    version: int
    date: date
    status: str
    digest: str
    seen_models: tuple[str, ...]
    reason: str


def versions(path: Path = AMENDMENTS) -> list[Version]:
    """The registry's versions, oldest first; a malformed file fails in one line."""
    entries = yaml.safe_load(path.read_text()) or []
    found = []
    for number, entry in enumerate(entries, start=1):
        try:
            version = Version(
                int(entry["version"]),
                entry["date"],
                str(entry["status"]),
                str(entry["digest"]),
                tuple(entry.get("seen_models") or ()),
                str(entry["reason"]).strip(),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise PipelineError(f"{path}: entry {number} lacks or mistypes {error}") from None
        problems = [
            (version.version != number, f"is numbered {version.version}, expected {number}"),
            (not isinstance(version.date, date), "has no date (YYYY-MM-DD)"),
            (version.status not in STATUSES, f"has status {version.status!r}, not {STATUSES}"),
            (version.status == "draft" and number < len(entries), "is a draft but not the last"),
            (not version.reason, "gives no reason"),
        ]
        for wrong, what in problems:
            if wrong:
                raise PipelineError(f"{path}: version {number} {what}")
        found.append(version)
    if not found:
        raise PipelineError(f"{path} lists no version of the claims registry")
    return found


def mismatch(current: str, path: Path = AMENDMENTS) -> str:
    """Why `current` is not the registered digest ('' when it is)."""
    last = versions(path)[-1]
    if current == last.digest:
        return ""
    if last.status == "draft":
        return (
            f"the claims' digest {current[:12]} differs from draft version {last.version}'s "
            f"{last.digest[:12]}: record it (`python -m pipeline.claims.registry --draft`)"
        )
    return (
        f"the claims' digest {current[:12]} differs from frozen version {last.version}'s "
        f"{last.digest[:12]}: a registered claim changed; add version {last.version + 1} "
        f"to {path.name} with its date and reason"
    )


@dataclass(frozen=True)
class Registration:
    """What the claims stage writes about the registry of its run."""

    version: int
    status: str  # draft, frozen, or unrecorded (the digest is no version's)
    digest: str
    mark: str  # `registered` or `fitted` (module docstring)

    def metrics(self) -> dict[str, str | int]:
        return {
            "registry.version": self.version,
            "registry.status": self.status,
            "registry.digest": self.digest,
            "registry.verdicts": self.mark,
        }


def registration(current: str, model: str, path: Path = AMENDMENTS) -> Registration:
    """The run's registry version and whether its verdicts are registered or fitted."""
    known = {v.digest: v for v in versions(path)}
    version = known.get(current)
    if version is None:
        return Registration(versions(path)[-1].version, "unrecorded", current, "fitted")
    registered = version.status == "frozen" and model not in version.seen_models
    return Registration(
        version.version, version.status, current, "registered" if registered else "fitted"
    )


def record_draft(current: str, path: Path = AMENDMENTS) -> None:
    """Write `current` as the draft version's digest (a frozen last version refuses)."""
    last = versions(path)[-1]
    if last.status != "draft":
        raise PipelineError(
            f"version {last.version} is frozen: add version {last.version + 1} to {path.name} "
            "(date, status: draft, reason) before recording a new digest"
        )
    text = path.read_text()
    if text.count(last.digest) != 1:
        raise PipelineError(f"{path}: the draft's digest must appear exactly once")
    write_text(path, text.replace(last.digest, current))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.claims.registry",
        description="The claims registry's digest, from the claims the code declares, and "
        "whether amendments.yaml records it.",
    )
    parser.add_argument("--draft", action="store_true", help="record it as the draft's digest")
    args = parser.parse_args(argv)
    with exit_on_error():
        current = registry_digest()
        if args.draft:
            record_draft(current)
        why = mismatch(current)
    print(f"digest {current}; " + (why or f"version {versions()[-1].version} records it"))
    sys.exit(1 if why else 0)


if __name__ == "__main__":
    main()
