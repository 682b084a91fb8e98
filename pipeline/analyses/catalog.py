"""Every analysis's declaration (`ANALYSIS` of its package's declaration.py), and what the
project builds from them: the DVC stages in dvc.yaml's order (pipeline/dag/declarations.py),
the report's sections in order (pipeline/report/html.py). The config groups come from the
settings modules alone (pipeline/analyses/groups.py). A declaration error fails in one line
naming the package and the fix.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from pipeline.analyses import folder, names, part
from pipeline.analyses.analysis import Analysis
from pipeline.core import layout
from pipeline.core.errors import PipelineError
from pipeline.dag.stage_types import OUTPUTS, Stage, Upstream


def analyses() -> dict[str, Analysis]:
    """Package name -> its declaration, by name (a package without declaration.py has none)."""
    found: dict[str, Analysis] = {}
    for name in names():
        module = part(name, "declaration")
        if module is None:
            continue
        declared = getattr(module, "ANALYSIS", None)
        if not isinstance(declared, Analysis):
            raise PipelineError(
                f"analysis {name}: {folder(name) / 'declaration.py'} declares no "
                "`ANALYSIS = Analysis(...)`; add it"
            )
        if declared.stage is not None and declared.stage.name != name:
            raise PipelineError(
                f"analysis {name} declares stage `{declared.stage.name}`; a stage is named as "
                f"its package: rename the stage to `{name}` or the package to "
                f"`{declared.stage.name}`"
            )
        found[name] = declared
    return found


def _writes(declared: Stage) -> list[PurePosixPath]:
    """The paths stage `declared` writes: its outputs, and its results' folders."""
    results = [layout.results(OUTPUTS, kind, declared.name) for kind in layout.RESULT_KINDS]
    metrics = layout.metrics(OUTPUTS, declared.name).with_suffix("")  # its metrics folder
    paths = [*declared.outs, *declared.kept_outs, *results, metrics]
    return [PurePosixPath(path) for path in paths]


def _nested(a: PurePosixPath, b: PurePosixPath) -> bool:
    """One path is the other or lies inside it."""
    return a == b or a in b.parents or b in a.parents


def upstream(reader: Stage, by_name: dict[str, Stage]) -> set[str]:
    """The stages whose outputs `reader` reads: its `Upstream` inputs, and the stages that
    write a path its other inputs name (a file of theirs, or a folder holding some)."""
    named = {i.stage for i in reader.inputs if isinstance(i, Upstream)}
    paths = [PurePosixPath(i) for i in reader.inputs if isinstance(i, str)]
    written = {
        name
        for name, writer in by_name.items()
        if any(_nested(path, out) for path in paths for out in _writes(writer))
    }
    return (named | written) - {reader.name}


def stages() -> tuple[Stage, ...]:
    """Every declared stage, each after the stages it reads (ties: by name): dvc.yaml's order.
    An input naming no declared stage, or a cycle, fails naming the stage."""
    by_name = {name: a.stage for name, a in analyses().items() if a.stage is not None}
    pending = {}
    for name, declared in by_name.items():
        unknown = sorted(
            i.stage for i in declared.inputs if isinstance(i, Upstream) and i.stage not in by_name
        )
        if unknown:
            raise PipelineError(
                f"analysis {name} reads stage `{unknown[0]}`, which no analysis declares; "
                "declare it or fix the input"
            )
        pending[name] = upstream(declared, by_name)
    ordered: list[Stage] = []
    while pending:
        ready = sorted(name for name, needs in pending.items() if not needs)
        if not ready:
            raise PipelineError(
                f"the stages {sorted(pending)} read each other's outputs in a cycle; "
                "drop the input that closes it"
            )
        ordered.append(by_name[ready[0]])
        del pending[ready[0]]
        for needs in pending.values():
            needs.discard(ready[0])
    return tuple(ordered)


def sections() -> dict[str, str]:
    """Package name -> the heading of its report section, in the report's order."""
    declared = [
        (a.section.order, name, a.section.title) for name, a in analyses().items() if a.section
    ]
    return {name: title for _, name, title in sorted(declared)}
