"""The schema of the whole composition, stored in Hydra's ConfigStore as `config_schema`:
the run-wide settings (`RunConfig`, pipeline/core/schema.py) and one field per config group
an analysis owns (pipeline/analyses/groups.py), typed by that group's settings dataclass.

`conf/config.yaml` starts from this node (the first entry of its defaults list), so Hydra
checks every value against it when it composes. DVC composes params.yaml in its own process;
it imports this module through the Hydra plugin in `tools/hydra_plugins/` (see `.dvc/config`,
`hydra.plugins_path`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field, make_dataclass
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf

from pipeline.analyses.groups import groups
from pipeline.core.bounds import check_bounds
from pipeline.core.schema import RunConfig, seed_in_seeds

# the run-wide settings, then each analysis's group in the order of `groups()`
Config = make_dataclass(
    "Config",
    [(owned.group, owned.schema, field(default_factory=owned.schema)) for owned in groups()],
    bases=(RunConfig,),
)
Config.__module__ = __name__
Config.__doc__ = "The whole composition: the run-wide settings, one field per config group."


def settings_in_bounds(*, _root_: Mapping[str, Any]) -> bool:
    """True if every bounded setting of the composed config lies in its bound (`bounded`,
    pipeline/core/bounds.py), else a one-line error naming the key, the value and the fix.
    Hydra resolves `settings_in_bounds` in conf/config.yaml with it, so composing checks it."""
    check_bounds(_root_, Config)
    return True


def register() -> None:
    """Store the schema as `config_schema` and the resolvers that check it (idempotent)."""
    ConfigStore.instance().store(name="config_schema", node=Config)
    OmegaConf.register_new_resolver("seed_in_seeds", seed_in_seeds, replace=True)
    OmegaConf.register_new_resolver("settings_in_bounds", settings_in_bounds, replace=True)


register()
