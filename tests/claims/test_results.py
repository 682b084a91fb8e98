"""Typed results between stages: every declared results type loads from the committed
outputs (the default run's and the registry fixture), a field renamed on one side only
fails in one line, the fine-tuned pattern shares hold no pre-trained key, and no claim
reads a path or a string key."""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import shutil
from pathlib import Path

import pytest

from pipeline import analyses
from pipeline.analyses.clark_heads.results import ClarkHeadsMetrics
from pipeline.analyses.patterns_apply.results import PatternsApplyMetrics
from pipeline.analyses.table1.results import TaskRow
from pipeline.claims.measurement_pins import FIXTURE
from pipeline.claims.outputs import StageOutputs
from pipeline.core import layout
from pipeline.core.errors import PipelineError
from pipeline.core.results import Covers, Family, Metrics, Record, Results, Table
from tests.support.paths import REPO

ROOTS = {"default run": REPO / "outputs", "registry fixture": FIXTURE}
# the fixture freezes what the claims' measures read; the headroom gate's rows
# (ablate's examples.csv) are read by the gate alone, which the digest pins on a grid
NOT_IN_FIXTURE = {"AblationRows"}


def results_types() -> list[type[Results]]:
    """Every results type the analyses declare (a Metrics file or a named Table)."""
    found = []
    for name in analyses.names():
        module = analyses.part(name, "results")
        for _, kind in inspect.getmembers(module, inspect.isclass) if module else ():
            declared_here = kind.__module__ == module.__name__
            a_file = issubclass(kind, Metrics) or (
                issubclass(kind, Table) and hasattr(kind, "name")
            )
            if declared_here and a_file and hasattr(kind, "stage"):
                found.append(kind)
    return found


TYPES = results_types()


def runs(root: Path, kind: type[Results]) -> list[tuple[str | int, ...]]:
    """The runs of `kind`'s stage whose file lies under `root`."""
    if kind.covers is Covers.RUN:
        candidates: list[tuple] = [()]
    elif kind.covers is Covers.SEED:
        candidates = [(int(p.stem.removeprefix("seed")),) for p in
                      (root / "metrics" / kind.stage).glob("seed*.json")]  # fmt: skip
    else:
        base = root / ("plots" if issubclass(kind, Table) else "metrics") / kind.stage
        found = base.glob("*/seed*" if issubclass(kind, Table) else "*/seed*.json")
        candidates = [(p.parent.name, int(p.name.removesuffix(".json")[4:])) for p in found]
    out = StageOutputs(root)
    return [run for run in candidates if out.has(kind, *run)]


def load_all(root: Path, skip: set[str] = frozenset()) -> dict[str, int]:
    """Every results type read from every run under `root` that holds it, by type: how many
    runs; a type no run holds (but `skip`) fails."""
    out = StageOutputs(root)
    loaded = {}
    for kind in TYPES:
        found = runs(root, kind)
        if not found and kind.__name__ not in skip:
            raise AssertionError(f"{root}: no run holds {kind.__name__} ({kind.stage})")
        instances = [out.read(kind, *run) for run in found]
        for f in dataclasses.fields(kind):
            families = [getattr(i, f.name) for i in instances]
            if families and isinstance(families[0], Family):
                assert any(families), f"{root}: {kind.__name__}.{f.name} is empty in every run"
        loaded[kind.__name__] = len(found)
    return loaded


def test_the_analyses_declare_the_results_the_claims_read():
    names = {kind.__name__ for kind in TYPES}
    assert {"AblateMetrics", "HeadRemovals", "Table1Metrics", "UdMetrics",
            "PatternsApplyMetrics", "PrepareMetrics", "FramenetHeads"} <= names  # fmt: skip


@pytest.mark.parametrize("where", ROOTS, ids=str)
def test_every_results_type_loads_from_the_committed_outputs(where):
    skip = NOT_IN_FIXTURE if where == "registry fixture" else set()
    loaded = load_all(ROOTS[where], skip)
    assert sum(loaded.values()) >= len(TYPES) - len(skip)


def _copy(f: dataclasses.Field, renamed: bool) -> dataclasses.Field:
    """A fresh field like `f` (make_dataclass names the field it is given), its key renamed
    where it reads one of its own and `renamed`."""
    metadata = dict(f.metadata)
    if renamed and "key" in metadata:
        metadata["key"] += "_renamed"
    if f.default is dataclasses.MISSING:
        return dataclasses.field(metadata=metadata)
    return dataclasses.field(default=f.default, metadata=metadata)


def _renamed(kind: type[Results], field: str) -> type[Results]:
    """`kind` with `field` renamed, or the key it reads (its declaration drifted from the
    writer)."""
    spec = [
        (f"{f.name}_renamed" if f.name == field and "key" not in f.metadata else f.name, f.type,
         _copy(f, f.name == field))
        for f in dataclasses.fields(kind)
    ]  # fmt: skip
    clone = dataclasses.make_dataclass(
        kind.__name__, spec, bases=(Metrics if issubclass(kind, Metrics) else Table,),
        frozen=True, eq=issubclass(kind, Metrics), namespace={"__module__": kind.__module__},
    )  # fmt: skip
    for attribute in ("stage", "covers", "name"):
        if hasattr(kind, attribute):
            setattr(clone, attribute, getattr(kind, attribute))
    return clone


def _renamable(kind: type[Results]) -> list[str]:
    """The fields of `kind` read from a key or column of their own (not a family), and not
    optional: renaming one must fail."""
    return [f.name for f in dataclasses.fields(kind)
            if "family" not in f.metadata and "None" not in str(f.type)]  # fmt: skip


@pytest.mark.parametrize("kind", TYPES, ids=lambda k: k.__name__)
def test_a_field_renamed_in_the_declaration_alone_fails_in_one_line(kind):
    fields = _renamable(kind)
    if not fields:
        pytest.skip(f"{kind.__name__} reads only families or optional fields")
    root = ROOTS["default run"]
    run = runs(root, kind)[0]
    StageOutputs(root).read(kind, *run)  # as declared, it loads
    field = fields[0]
    with pytest.raises(PipelineError, match=rf"_renamed`.*dvc repro {kind.stage}"):
        StageOutputs(root).read(_renamed(kind, field), *run)


def test_a_task_row_field_renamed_in_the_declaration_alone_fails_in_one_line():
    renamed = dataclasses.make_dataclass(
        "TaskRow", [(f.name.replace("minus_chance", "over_chance"), f.type, _copy(f, False))
                    for f in dataclasses.fields(TaskRow)], bases=(Record,), frozen=True,
        namespace={"__module__": TaskRow.__module__},
    )  # fmt: skip
    flat, place = StageOutputs(FIXTURE)._flat("table1", ("seed42",))
    TaskRow.parse(flat, place, "table1", prefix="mrpc.")
    with pytest.raises(PipelineError, match=r"no `mrpc.finetuned_over_chance`.*dvc repro table1"):
        renamed.parse(flat, place, "table1", prefix="mrpc.")


def test_a_field_renamed_by_the_writer_alone_fails_in_one_line(tmp_path):
    fixture = tmp_path / "fixture"
    shutil.copytree(FIXTURE, fixture)
    load_all(fixture, NOT_IN_FIXTURE)
    written = layout.metrics(fixture, "clark_heads", "mrpc", "seed42")
    renamed = {k.replace("same_layer_margin", "layer_margin"): v
               for k, v in json.loads(written.read_text()).items()}  # fmt: skip
    written.write_text(json.dumps(renamed))
    with pytest.raises(PipelineError, match=r"seed42\.json has no `same_layer_margin`"):
        load_all(fixture, NOT_IN_FIXTURE)
    with pytest.raises(PipelineError, match=r"re-run `dvc repro clark_heads`"):
        StageOutputs(fixture).read(ClarkHeadsMetrics, "mrpc", 42)


def test_the_fine_tuned_shares_hold_no_pre_trained_key():
    """The share claims read fine-tuned maps: each share is its `<task>.finetuned.<type>`
    interval as written, though the file holds `<task>.pretrained.<type>` beside it."""
    root = ROOTS["default run"]
    written = json.loads(layout.metrics(root, "patterns_apply", "seed42").read_text())
    shares = StageOutputs(root).read(PatternsApplyMetrics, 42).shares
    pretrained = {}
    for task, kinds in shares.items():
        for kind, share in kinds.items():
            key = f"{task}.finetuned.{kind}"
            assert (share.estimate, share.low, share.high) == (
                written[key],
                written[f"{key}_ci_low"],
                written[f"{key}_ci_high"],
            ), key
            pretrained[key] = written.get(f"{task}.pretrained.{kind}")
    differs = [k for k, v in pretrained.items() if v is not None and v != written[k]]
    assert differs  # else a pre-trained share read in its place would pass too


CLAIMS_CODE = [
    *(REPO / "pipeline" / "claims").glob("*.py"),
    *(REPO / "pipeline" / "analyses").glob("*/claims.py"),
]
UNTYPED = re.compile(
    r"\b(out|outputs)\.(value|interval|metrics|table|has_metrics)\(|seed_folder\(|layout\."
)


@pytest.mark.parametrize("path", CLAIMS_CODE, ids=lambda p: str(p.relative_to(REPO)))
def test_no_claim_reads_a_path_or_a_string_key(path):
    """The claims, gates and their helpers read typed results alone (`out.read(Type, ...)`);
    the reader itself aside."""
    if path.name == "outputs.py":
        pytest.skip("the reader of the files")
    found = [line.strip() for line in path.read_text().splitlines() if UNTYPED.search(line)]
    assert not found, f"{path.name} reads untyped results: {found}"


def test_the_reader_offers_typed_reads_only():
    public = {name for name in dir(StageOutputs) if not name.startswith("_")}
    assert public == {"read", "has"}
