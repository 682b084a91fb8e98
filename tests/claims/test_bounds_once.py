"""Each bound the claims share is stated once: a threshold's value or a rule's `bound`
written as a number appears as that number once across pipeline/claims/thresholds.py and
the analyses' claims modules, and an analysis's claims never write the value of a named
constant of thresholds.py: a value two claims use is such a constant (HALF, QUARTER, WHOLE)
that each imports, while each keeps its own reason. (Within thresholds.py a threshold's
number is its declaration: RECURS's one head, 1.0, is no share's bound, WHOLE.)"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from tests.support.paths import REPO

THRESHOLDS = REPO / "pipeline/claims/thresholds.py"


def claim_files() -> list[Path]:
    return [THRESHOLDS, *sorted(REPO.glob("pipeline/analyses/*/claims.py"))]


def _number(node: ast.expr) -> bool:
    """A number written in place (`0.5`, `-0.01`), not a name."""
    inner = node.operand if isinstance(node, ast.UnaryOp) else node
    return isinstance(inner, ast.Constant) and isinstance(inner.value, int | float)


def written_bounds(tree: ast.Module) -> list[float]:
    """The numbers written as a `Threshold`'s value or a rule's `bound=`."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        called = getattr(node.func, "id", getattr(node.func, "attr", ""))
        values = [k.value for k in node.keywords if k.arg == "bound"]
        if called == "Threshold":
            values += node.args[:1] + [k.value for k in node.keywords if k.arg == "value"]
        found += [ast.literal_eval(v) for v in values if _number(v)]
    return found


def named_values() -> dict[float, str]:
    """The numbers thresholds.py names (`HALF = 0.5`), by value."""
    tree = ast.parse(THRESHOLDS.read_text())
    named = [n for n in tree.body if isinstance(n, ast.Assign) and _number(n.value)]
    return {ast.literal_eval(n.value): ast.unparse(n.targets[0]) for n in named}


def test_a_bound_two_claims_use_is_stated_once() -> None:
    files = claim_files()
    counts = Counter(b for path in files for b in written_bounds(ast.parse(path.read_text())))
    assert {value: n for value, n in counts.items() if n > 1} == {}
    named = named_values()
    claims = [b for path in files[1:] for b in written_bounds(ast.parse(path.read_text()))]
    assert {value: named[value] for value in claims if value in named} == {}
