"""The `table1` config group's schema; its values are conf/table1/default.yaml."""

from __future__ import annotations

from dataclasses import dataclass

from omegaconf import MISSING

from pipeline.analyses.groups import Settings


@dataclass
class Table1Config:
    bootstrap_resamples: int = MISSING


SETTINGS = Settings("table1", Table1Config)
