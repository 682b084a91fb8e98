"""The `report` config group's schema; its values are conf/report/default.yaml."""

from __future__ import annotations

from dataclasses import dataclass

from omegaconf import MISSING

from pipeline.analyses.groups import Settings


@dataclass
class ReportConfig:
    title: str = MISSING


SETTINGS = Settings("report", ReportConfig)
