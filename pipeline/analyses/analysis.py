"""What an analysis package declares about its stage, in two modules of its own (the
package's other parts, its typed results and its claims, are `results.py` and `claims.py`:
pipeline/core/results.py, pipeline/claims/cases.py):

- `settings.py` (where the analysis owns a config group): the group's schema dataclasses and
  `SETTINGS = Settings(group, schema)` (pipeline/analyses/groups.py); the group's values are
  conf/<group>/default.yaml.
- `declaration.py`: `ANALYSIS = Analysis(stage, section)` (below), the DVC stage that runs it
  (pipeline/dag/stage_types.py) and the report section that shows its results.

They stand apart because a stage's run loads the schemas of the groups it types (its own
and its upstream stages' `settings.py`: pipeline/core/stage_schema.py) but no stage's
declaration: editing a declaration reruns only the report (which shows the sections) and
changes dvc.yaml where the stage's entry changes, while editing a group's schema reruns the
stages that type it, as a schema change must. An analysis
without a stage (a claim that reads other stages' results) declares `Analysis()`, or no
declaration at all. pipeline/analyses/catalog.py collects the declarations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pipeline.dag.stage_types import Stage


@dataclass(frozen=True)
class Section:
    """The report's section of an analysis's results: its heading, and where it stands
    (sections run by ascending `order`; the folders of undeclared sections follow, by name)."""

    title: str
    order: int


@dataclass(frozen=True)
class Analysis:
    """One analysis: the DVC stage that runs it (its `name` is the package's), and the report
    section of its results. Either may be None: a stage whose results the report shows with
    a generic heading, or an analysis that runs no stage."""

    stage: Stage | None = None
    section: Section | None = None
