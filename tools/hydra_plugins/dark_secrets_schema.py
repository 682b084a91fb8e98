"""Registers the typed config schema when Hydra scans for plugins.

DVC composes params.yaml in its own process, where nothing imports the project; it does let
Hydra scan `hydra.plugins_path` (`.dvc/config`: tools) for `hydra_plugins` modules,
and importing this one stores `config_schema` in the ConfigStore before composition.
"""

import pipeline.core.schema  # noqa: F401  (registers on import)
