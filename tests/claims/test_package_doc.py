"""The claims package's docstring names its modules as they are: every module it names
exists, and every module is named."""

from __future__ import annotations

import re
from pathlib import Path

import pipeline.claims


def test_the_package_docstring_names_every_module_and_no_other():
    folder = Path(pipeline.claims.__file__).parent
    named = set(re.findall(r"(\w+)\.py\b", pipeline.claims.__doc__ or ""))
    present = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    assert named == present, (named - present, present - named)
