"""The plan: which stages `dvc repro [targets]` would visit, in its order, and the edges
between them, all from DVC's own graph and planner."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx
from dvc.dvcfile import PROJECT_FILE
from dvc.repo import Repo
from dvc.repo.reproduce import collect_stages, get_active_graph, plan_repro
from dvc.stage import Stage


@dataclass(frozen=True)
class Plan:
    order: list[Stage]  # dvc repro's order: every stage after the stages it depends on
    upstream: dict[Stage, list[Stage]]  # the stages each one depends on
    downstream: dict[Stage, set[Stage]]  # every stage that depends on it, transitively

    def priority(self, stage: Stage) -> tuple[int, int]:
        """Ready stages start in this order: those that unblock the most first, then
        dvc repro's order."""
        return -len(self.downstream[stage]), self.order.index(stage)


def plan(repo: Repo, targets: Sequence[str] = ()) -> Plan:
    """The stages `dvc repro targets` would visit (every stage of dvc.yaml without targets)."""
    graph = get_active_graph(repo.index.graph)  # frozen stages cut from their deps, as DVC does
    order = plan_repro(graph, collect_stages(repo, list(targets) or [PROJECT_FILE]))
    sub = graph.subgraph(order)  # edges point from a stage to the stages it depends on
    return Plan(
        order=order,
        upstream={stage: list(sub.successors(stage)) for stage in order},
        downstream={stage: nx.ancestors(sub, stage) for stage in order},
    )


def runs_as_job(stage: Stage) -> bool:
    """A plain command stage runs as a job; imports, data sources and frozen stages are left
    to DVC in the orchestrator's process (they run no command of the project)."""
    return bool(stage.cmd) and not stage.frozen and not stage.is_import
