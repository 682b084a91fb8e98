"""The tree speaks of itself alone: no tracked file names the tracker entries or the units of
work it was built under; test files and docstrings are named for the code they test."""

from __future__ import annotations

import re
import subprocess

from tests.support.paths import REPO

# Built from parts, so that this file does not match itself.
WORK_ITEM = "|".join(
    [
        r"\b" + "iss" + r"ues?\s*#?\s*[0-9]+",  # a tracker entry by number
        r"\b" + "work" + r"[ -]items?\b",
    ]
)


def mentions(text: str) -> list[str]:
    """What `text` says of the tracker entries and units of work (none allowed)."""
    return [m.group(0) for m in re.finditer(WORK_ITEM, text, flags=re.IGNORECASE)]


def test_the_pattern_finds_what_it_is_meant_to_find() -> None:
    named = ["Iss" + "ue 22: the DAG", "see iss" + "ue #8", "two wor" + "k items", "Wor" + "k-item"]
    assert [len(mentions(text)) for text in named] == [1, 1, 1, 1]
    assert mentions("an issue of the format; 22 items of work") == []


def test_no_tracked_file_mentions_a_work_item() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    found = []
    for name in filter(None, tracked):
        path = REPO / name
        if not path.is_file() or path.stat().st_size > 4_000_000:
            continue
        data = path.read_bytes()
        if b"\0" in data[:8000]:  # binary
            continue
        found += [f"{name}: {m}" for m in mentions(data.decode("utf-8", errors="replace"))]
    assert found == []
