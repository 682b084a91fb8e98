"""Registers the typed config schema when Hydra scans for plugins, and makes a bad
`dvc exp run -S` override fail in one line.

DVC composes params.yaml in its own process, where nothing imports the project; it does let
Hydra scan `hydra.plugins_path` (`.dvc/config`: tools) for `hydra_plugins` modules, so
importing this one:
- stores `config_schema` in the ConfigStore before composition (pipeline.core.schema);
- in DVC's process, wraps Hydra's composition so that the overrides are checked as a stage
  run checks its command line (an unknown key names the nearest: `finetune.epoch` ->
  `finetune.epochs`) and any composition error reaches DVC as a DvcException, which DVC
  prints as one `ERROR:` line; any other exception it frames as an "unexpected error" with
  its support link. (DVC has imported `hydra.compose` before the scan, so the wrap is on
  the method that function calls.)
"""

from __future__ import annotations

import functools
import sys

from hydra._internal.hydra import Hydra
from hydra.errors import HydraException
from omegaconf.errors import OmegaConfBaseException

from pipeline.core.errors import PipelineError
from pipeline.core.overrides import check_overrides


def _one_line(error: BaseException) -> str:
    """The error and its causes in one line, without OmegaConf's type bookkeeping."""
    lines = []
    while error is not None:
        lines += [line.strip() for line in str(error).splitlines()]
        error = error.__cause__
    kept = [line for line in lines if line and not line.startswith(_BOOKKEEPING)]
    return "; ".join(dict.fromkeys(kept))


_BOOKKEEPING = ("reference_type=", "object_type=", "provider=", "To append to your config")


def checked(compose_config):
    """`Hydra.compose_config` after `check_overrides`; its errors as one-line DvcExceptions."""

    @functools.wraps(compose_config)
    def compose(self: Hydra, config_name: str | None, overrides: list[str], *args, **kwargs):
        from dvc.exceptions import DvcException

        try:
            check_overrides(list(overrides))
            return compose_config(self, config_name, overrides, *args, **kwargs)
        except (PipelineError, HydraException, OmegaConfBaseException) as error:
            raise DvcException(f"{_one_line(error)} (params.yaml is unchanged)") from None

    return compose


if "dvc" in sys.modules and not hasattr(Hydra.compose_config, "__wrapped__"):
    Hydra.compose_config = checked(Hydra.compose_config)  # DVC's composition, not a stage's
