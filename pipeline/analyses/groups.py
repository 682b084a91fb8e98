"""What an analysis's `settings.py` declares: the config group it owns and the dataclass
that types it (`SETTINGS = Settings(group, schema)`). pipeline/analyses/group_scan.py finds
every package's; a stage imports only those of the groups it types
(pipeline/core/stage_schema.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    """A config group an analysis owns: `group` is its key in the composed config (and the
    folder conf/<group>/ of its values), `schema` the dataclass that types it. A group has one
    owner; another analysis may read it (patterns_apply reads patterns_train's `patterns`)."""

    group: str
    schema: type
