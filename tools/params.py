"""Compose conf/ the way DVC's Hydra integration does, and write params.yaml.

`python -m tools.params [overrides]` refreshes params.yaml after editing conf/ (DVC does
the same on `dvc exp run`); a test keeps the committed file equal to the default composition.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from pipeline.core import config_schema  # noqa: F401  (registers the typed config)
from pipeline.core.config import CONF_DIR


def compose_params(overrides: list[str] | None = None, conf_dir: Path = CONF_DIR) -> str:
    """The YAML text DVC writes to params.yaml for these overrides (of the config in
    `conf_dir`: the project's conf/, or a copy with a test's toy group)."""
    with initialize_config_dir(str(conf_dir), version_base=None):
        cfg = compose(config_name="config", overrides=overrides or [])
    OmegaConf.resolve(cfg)
    return OmegaConf.to_yaml(cfg)


if __name__ == "__main__":
    Path("params.yaml").write_text(compose_params(sys.argv[1:]), encoding="utf-8")
