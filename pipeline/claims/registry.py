"""The claims registry: a version and a digest of every registered claim, and the dated
amendments that change it.

The digest (version 3 on) is the SHA-256 of a canonical JSON (sorted keys, no whitespace)
of its parts. What the claims say (`digest`): each claim's id, the paper's statement, its
source (paper, place, printed number), the statistic, the rule's name and parameters (with
the power check's effect and the room a removal claim needs), the threshold, whether it is
an extension, the tasks whose fine-tuned models it reads and whether the gates apply, and the
claim-relevant settings by key (the SETTINGS beside each analysis's claims,
measurement_pins.settings_by_family: label folders, example counts, the classifier's
settings, the gates' inputs), as conf/ composes them under each profile a
committed table is judged under (measurement_pins.PROFILES, from version 6 on), over the
claims declared for every task the analyses name for it (provides.registry_tasks: those of
Kovaleva et al.'s Table 1). How they
are measured: the visual labels the pattern classifier learns from
(measurement_pins.label_pins, from version 5 on), every judged profile's seeds, fine-tuning
recipe and sample sizes (measurement_pins.profile_pins, from version 8 on), and every input
a rule reads of each statistic on a small committed fixture (measurement_pins.fixture_outputs:
the interval, its critical value, its evidence and any bracket's ends). And how measurements
become verdicts (from version 6 on): the verdicts, pooled intervals and power figures of a
synthetic grid of per-seed statistics (seeds that agree and seeds that disagree), and the
gates' answers on a synthetic grid of margins (verdict_pins.verdict_grid, gate_grid).
The rows a run adds for each unit it scored (provides.Unit: e.g. an extension row for each
UD relation outside Clark's Table 1) are one template each, registered once with the unit's
place-holder (`<relation>`) in its name: which units a run scores depends on its data, never
on the registry. It hashes no code and no run's outputs, so
moving or renaming code leaves it alone and every model's run shares it; a change to a
claim's words, threshold, settings, labels, measured behaviour, or the way seeds, rules,
`settle`, the power check and the gates turn measurements into verdicts moves it.

`amendments.yaml` beside this file lists the registry's versions, oldest first, each with
its date, status (`draft` or `frozen`), digest, the models whose results had been seen when
its rules were written (`seen_models`) and its reason. Only the last version may be a
draft. A frozen version is never edited: changing a registered claim adds a version with its
date and reason. tests/claims/test_registry.py fails when the digest of the claims differs
from the last version's.

`registry_record.json` beside it holds the parts of the last version's digest as plain
values (each claim's spec by id, the label pins, the fixture's outputs, the verdict and
gate grids; `RECORD`), written with the digest. When the digest moves, the failure names
what moved against that record: which claims' specs, which measurement pins and which
verdict pins changed, each with its old and new value, so recording the next version is a
reviewed act.

A verdict is `registered` when the run's claims are exactly a frozen version's and the
run's model is not among that version's `seen_models`; otherwise it is `fitted` (its model's
results, or the results of the draft's time, were seen before the rules were fixed).

    python -m pipeline.claims.registry            # the digest, and whether it is recorded
    python -m pipeline.claims.registry --draft    # record it in the draft version
    python -m pipeline.claims.registry --record   # rewrite the record of the last version
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

from pipeline.claims import provides
from pipeline.claims.claim import Claim, Scope
from pipeline.claims.evaluate import all_claims, declared_claims
from pipeline.claims.measurement_pins import (
    FIXTURE,
    FIXTURE_TASKS,
    fixture_outputs,
    label_pins,
    profile_pins,
    settings,
)
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.thresholds import Threshold
from pipeline.claims.verdict_pins import gate_grid, verdict_grid
from pipeline.core.errors import PipelineError, exit_on_error
from pipeline.core.io import write_text

AMENDMENTS = Path(__file__).with_name("amendments.yaml")
RECORD = Path(__file__).with_name("registry_record.json")  # the last version's parts
STATUSES = ("draft", "frozen")
TO_WRITE = "TO WRITE:"  # how a draft's reason starts until it is written (draft_entry.py)
LATER_PARTS = ("profiles",)  # parts a record of an earlier version lacks: `moved` adds them
NAMED = 20  # the most moved items a failure names (the command lists them all)
SHOWN = 120  # the most characters of an old or new value a moved item shows


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
        "extension": claim.extension,
        "finetuned": claim.finetuned,
        "gated": claim.gated,
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


def _canonical(value: object) -> str:
    """The canonical JSON the digest hashes: sorted keys, no whitespace, ASCII."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=_plain
    )


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _specs_digest(specs: Sequence[dict[str, Any]]) -> str:
    return _sha256(_canonical(sorted(specs, key=lambda spec: spec["id"])))


def digest(claims: Sequence[Claim]) -> str:
    """SHA-256 of the canonical JSON of the claims' specs, in id order."""
    return _specs_digest([claim_spec(c) for c in claims])


def registered_claims() -> list[Claim]:
    """Every claim of the registry: those declared for every task of the registry's
    (provides.registry_tasks), each unit's rows once, as its template (provides.Unit)."""
    lent = provides.lent()
    templates = {unit.name: (unit.template(),) for unit in lent.units}
    return declared_claims(Scope(lent.tasks, templates))


def registry_parts(
    claims: Sequence[Claim] | None = None, fixture: Path = FIXTURE
) -> dict[str, dict[str, Any]]:
    """What the registry's digest covers (module docstring), as plain values: each
    registered claim's spec by id, the labels the pattern classifier learns from, what the
    claims of the fixture's tasks measure on it (`claims`, for a test: those claims,
    declared otherwise), and the verdict and gate grids."""
    measured = claims if claims is not None else all_claims(StageOutputs(fixture), FIXTURE_TASKS)
    return {
        "claims": {c.name: json.loads(_canonical(claim_spec(c))) for c in registered_claims()},
        "labels": label_pins(),
        "profiles": json.loads(_canonical(profile_pins())),
        "fixture": fixture_outputs(list(measured), fixture),
        "verdicts": verdict_grid(),
        "gates": gate_grid(),
    }


def digest_of(parts: dict[str, dict[str, Any]]) -> str:
    """The registry's digest of its parts (`registry_parts`): the claims by the digest of
    their specs, the other parts as they are."""
    return _sha256(_canonical({**parts, "claims": _specs_digest(list(parts["claims"].values()))}))


def registry_digest(claims: Sequence[Claim] | None = None, fixture: Path = FIXTURE) -> str:
    """The registry's digest (module docstring; `registry_parts`)."""
    return digest_of(registry_parts(claims, fixture))


# how each part's items are named in a failure: claims' specs, measurement and verdict pins
PART_NAMES = {
    "claims": "claim",
    "labels": "measurement pin labels",
    "profiles": "measurement pin profiles",
    "fixture": "measurement pin fixture",
    "verdicts": "verdict pin verdicts",
    "gates": "verdict pin gates",
}


def _shown(value: object) -> str:
    text = "(none)" if value is None else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


def _leaves(old: object, new: object, where: str) -> list[tuple[str, object, object]]:
    """Where two plain values differ, down to the leaves of their mappings: (`where.key`,
    old, new)."""
    if isinstance(old, dict) and isinstance(new, dict):
        keys = [*old, *(k for k in new if k not in old)]
        return [
            leaf
            for k in keys
            for leaf in _leaves(old.get(k), new.get(k), f"{where}.{k}" if where else str(k))
        ]
    return [] if old == new else [(where, old, new)]


def moved(recorded: dict[str, dict[str, Any]], current: dict[str, dict[str, Any]]) -> list[str]:
    """What moved from the recorded parts to the current ones, one line per item with its
    old and new value: a claim's spec by its id and field (`claim <id>: threshold 0.5 ->
    0.6`), a measurement pin (the label files, the fixture's outputs by claim) or a verdict
    pin (a grid case)."""
    lines = []
    for part, name in PART_NAMES.items():
        old, new = recorded.get(part, {}), current.get(part, {})
        for item in [*old, *(k for k in new if k not in old)]:
            if item not in new:
                lines.append(f"{name} {item}: removed")
            elif item not in old:
                lines.append(f"{name} {item}: added")
            elif part == "claims":
                lines += [
                    f"{name} {item}: {where} {_shown(was)} -> {_shown(now)}"
                    for where, was, now in _leaves(old[item], new[item], "")
                ]
            else:
                lines += [
                    f"{name} {where}: {_shown(was)} -> {_shown(now)}"
                    for where, was, now in _leaves(old[item], new[item], item)
                ]
    return lines


def read_record(record: Path = RECORD) -> dict[str, dict[str, Any]]:
    """The recorded parts of the last version's digest; a missing or malformed record fails
    in one line."""
    try:
        parts = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise PipelineError(
            f"{record}: no readable record of the registry's parts ({error}); write it with "
            "`python -m pipeline.claims.registry --record`"
        ) from None
    needed = set(PART_NAMES) - set(LATER_PARTS)
    if not isinstance(parts, dict) or not needed <= set(parts) <= set(PART_NAMES):
        raise PipelineError(
            f"{record} does not hold the parts {sorted(PART_NAMES)}; rewrite it with "
            "`python -m pipeline.claims.registry --record`"
        )
    return parts


def write_record(parts: dict[str, dict[str, Any]], record: Path = RECORD) -> None:
    """Write the parts of a recorded digest (atomically), one key a line for review."""
    write_text(record, json.dumps(parts, sort_keys=True, indent=1, ensure_ascii=True) + "\n")


def what_moved(parts: dict[str, dict[str, Any]], record: Path = RECORD) -> list[str]:
    """`moved` from the record to `parts`, led by a line saying which digest the record
    is of."""
    recorded = read_record(record)
    return [f"against {record.name} (digest {digest_of(recorded)[:12]})", *moved(recorded, parts)]


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
    try:
        entries = yaml.safe_load(path.read_text()) or []
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" (line {where.line + 1})" if where else ""
        raise PipelineError(
            f"{path} is not valid YAML{line}; quote a reason that holds ': ' or write it as "
            "`reason: >-` with the text indented below"
        ) from None
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
            (
                version.status == "frozen" and version.reason.startswith(TO_WRITE),
                f"is frozen with the draft's place-holder reason ({TO_WRITE} ...); write it",
            ),
        ]
        for wrong, what in problems:
            if wrong:
                raise PipelineError(f"{path}: version {number} {what}")
        found.append(version)
    if not found:
        raise PipelineError(f"{path} lists no version of the claims registry")
    return found


def mismatch(
    current: str, path: Path = AMENDMENTS, changes: Sequence[str] = (), named: int = NAMED
) -> str:
    """Why `current` is not the registered digest ('' when it is), with what moved
    (`changes`, from `what_moved`), at most `named` of them, one a line."""
    last = versions(path)[-1]
    if current == last.digest:
        return ""
    if last.status == "draft":
        why = (
            f"the claims' digest {current[:12]} differs from draft version {last.version}'s "
            f"{last.digest[:12]}: record it (`python -m pipeline.claims.registry --draft`)"
        )
    else:
        why = (
            f"the claims' digest {current[:12]} differs from frozen version {last.version}'s "
            f"{last.digest[:12]}: a registered claim changed; add version {last.version + 1} "
            f"to {path.name} with its date and reason"
        )
    if not changes:
        return why
    head, *items = changes
    more = len(items) - named
    tail = [f"and {more} more (`python -m pipeline.claims.registry` lists them all)"]
    shown = items[:named] + (tail if more > 0 else [])
    return "\n".join([f"{why}; what moved, {head}:", *(f"  {line}" for line in shown)])


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


def record_last(
    parts: dict[str, dict[str, Any]], path: Path = AMENDMENTS, record: Path = RECORD
) -> None:
    """Write `parts` as the record when their digest is the last version's (else refuse in
    one line: the record holds what a version recorded, nothing else)."""
    last = versions(path)[-1]
    if digest_of(parts) != last.digest:
        raise PipelineError(
            f"the claims' digest {digest_of(parts)[:12]} is not version {last.version}'s "
            f"{last.digest[:12]}: record the digest first (`--draft`), or add the next version"
        )
    write_record(parts, record)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.claims.registry",
        description="The claims registry's digest, from the claims the code declares, and "
        "whether amendments.yaml records it.",
    )
    parser.add_argument("--draft", action="store_true", help="record it as the draft's digest")
    parser.add_argument(
        "--record",
        action="store_true",
        help=f"rewrite {RECORD.name} when the last version records the digest",
    )
    args = parser.parse_args(argv)
    with exit_on_error():
        parts = registry_parts()
        current = digest_of(parts)
        if args.draft:
            record_draft(current)
            write_record(parts)
        if args.record:
            record_last(parts)
        why = mismatch(current)
        if why:
            changes = what_moved(parts)
            why = mismatch(current, changes=changes, named=len(changes))
    print(f"digest {current}; " + (why or f"version {versions()[-1].version} records it"))
    sys.exit(1 if why else 0)


if __name__ == "__main__":
    main()
