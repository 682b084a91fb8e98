"""The schema of the whole composition, stored in Hydra's ConfigStore as `config_schema`:
the run-wide settings (`RunConfig`, pipeline/core/schema.py) and one field per config group
an analysis owns (pipeline/analyses/group_scan.py), typed by that group's settings dataclass.

`conf/config.yaml` starts from this node (the first entry of its defaults list), so Hydra
checks every value against it when it composes. DVC composes params.yaml in its own process;
it imports this module through the Hydra plugin in `tools/hydra_plugins/` (see `.dvc/config`,
`hydra.plugins_path`). A stage's run types a part of it instead: its own groups and its
upstream stages' (pipeline/core/stage_schema.py), so it imports no other analysis's settings.
"""

from __future__ import annotations

from pipeline.analyses.group_scan import groups
from pipeline.core.stage_schema import build, register

# the run-wide settings, then each analysis's group in the order of `groups()`
Config = build({owned.group: owned.schema for owned in groups()})
Config.__module__ = __name__  # pickled by reference, as this module's
register(Config)
