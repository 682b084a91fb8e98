"""The config groups the analyses own: each package's `settings.py` (`SETTINGS`), by package
name. The whole composition's schema (pipeline/core/config_schema.py) has one field per group,
and conf/config.yaml's defaults list one entry (pipeline/analyses/defaults_list.py).

Only the settings modules are imported here, never a declaration (pipeline/analyses/
analysis.py says why the two stand apart). A stage's run does not scan: it imports the
settings of its own groups and its upstream stages' alone (pipeline/core/stage_schema.py).
"""

from __future__ import annotations

from pipeline.analyses import conf_dir, folder, names, part
from pipeline.analyses.groups import Settings
from pipeline.core.errors import PipelineError


def owners() -> dict[str, str]:
    """Every config group an analysis owns -> the package that owns it, by package name. A
    package whose settings.py lacks `SETTINGS`, a group two packages own, or a group without
    conf/<group>/default.yaml fails in one line naming the package and the fix."""
    owners: dict[str, str] = {}
    for name in names():
        module = part(name, "settings")
        if module is None:
            continue
        declared = getattr(module, "SETTINGS", None)
        if not isinstance(declared, Settings):
            raise PipelineError(
                f"analysis {name}: {folder(name) / 'settings.py'} declares no "
                "`SETTINGS = Settings(group, schema)`; add it (or move the file's dataclasses "
                "to the analysis that owns their group)"
            )
        group = declared.group
        if group in owners:
            raise PipelineError(
                f"analyses {owners[group]} and {name} both own config group `{group}`; a group "
                f"has one owner: drop SETTINGS from {name}'s settings.py and read the group there"
            )
        if not (conf_dir(name) / group / "default.yaml").is_file():
            raise PipelineError(
                f"analysis {name}: its config group `{group}` has no {group}/default.yaml in "
                f"{conf_dir(name)}; write the group's values there"
            )
        owners[group] = name
    return owners


def groups() -> tuple[Settings, ...]:
    """The config group of every analysis that owns one (`owners`), by the name of its
    package."""
    return tuple(part(name, "settings").SETTINGS for name in owners().values())
