"""The registry's draft entry with the claims' digest: when the digest is no longer the last
version's, a frozen last version gets the next one appended to
pipeline/claims/amendments.yaml (dated today, `status: draft`, the digest, the last
version's `seen_models`, and a reason left to write), a draft last version gets the new
digest; `registry_record.json` is rewritten with the digest's parts either way (as
`python -m pipeline.claims.registry --draft` does). A digest the last version records
changes nothing.

    python -m pipeline.claims.draft_entry
"""

from __future__ import annotations

import argparse
from datetime import date
from pathlib import Path

from pipeline.claims.registry import (
    AMENDMENTS,
    RECORD,
    TO_WRITE,
    digest_of,
    record_draft,
    registry_parts,
    versions,
    write_record,
)
from pipeline.core.errors import exit_on_error
from pipeline.core.io import write_text

REASON_TO_WRITE = (
    f"{TO_WRITE} what changed in the claims and why, and what had been seen when the rules "
    "were written."
)


def entry(version: int, day: date, digest: str, seen_models: tuple[str, ...]) -> str:
    """One draft version of the ledger, as amendments.yaml writes it."""
    return (
        f"- version: {version}\n"
        f"  date: {day.isoformat()}\n"
        "  status: draft\n"
        f"  digest: {digest}\n"
        f"  seen_models: [{', '.join(seen_models)}]\n"
        "  reason: >-\n"
        f"    {REASON_TO_WRITE}\n"
    )


def open_draft(current: str, path: Path = AMENDMENTS, day: date | None = None) -> str:
    """Record digest `current` in the ledger at `path` (module docstring); what was done,
    in words."""
    last = versions(path)[-1]
    if current == last.digest:
        return f"version {last.version} records digest {current[:12]}; nothing to draft"
    if last.status == "draft":
        record_draft(current, path)
        return f"draft version {last.version} now records digest {current[:12]}"
    text = path.read_text()
    text += "" if text.endswith("\n") else "\n"
    drafted = entry(last.version + 1, day or date.today(), current, last.seen_models)
    write_text(path, text + drafted)
    return (
        f"draft version {last.version + 1} added with digest {current[:12]}; write its reason "
        f"in {path.name}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.claims.draft_entry", description=__doc__.split("\n\n")[0]
    )
    parser.parse_args(argv)
    with exit_on_error():
        parts = registry_parts()
        said = open_draft(digest_of(parts))
        write_record(parts, RECORD)
    print(said)


if __name__ == "__main__":
    main()
