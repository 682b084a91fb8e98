"""Registers the typed config schema when Hydra scans for plugins, and makes a bad
`dvc exp run -S` override fail in one line.

DVC composes params.yaml in its own process, where nothing imports the project; it does let
Hydra scan `hydra.plugins_path` (`.dvc/config`: tools) for `hydra_plugins` modules, so
importing this one:
- stores `config_schema` in the ConfigStore before composition (pipeline.core.config_schema),
  through Hydra's public ConfigStore: the typed schema in the defaults list;
- in DVC's process, wraps Hydra's composition so that the overrides are checked as a stage
  run checks its command line (an unknown key names the nearest: `finetune.epoch` ->
  `finetune.epochs`) and any composition error reaches DVC as a DvcException, which DVC
  prints as one `ERROR:` line; any other exception it frames as an "unexpected error" with
  its support link.

Why the wrap is on a private method (`hydra._internal.hydra.Hydra.compose_config`): no public
part of Hydra 1.3 sees the overrides of a `compose()` call or its error. DVC calls
`hydra.compose` itself (dvc/utils/hydra.py, `compose_and_dump`), bound before this scan, so
that function cannot be wrapped; the plugin kinds Hydra discovers (search path, config
source, launcher, sweeper) and its callbacks are given no overrides under `compose()` (the
latter two only run under `@hydra.main`); an unknown key fails inside Hydra's override
merging, before any resolver runs. The bounds and seed checks need no wrap: they are
resolvers of conf/config.yaml (`settings_in_bounds`, `seed_in_seeds`) that DVC resolves before
it writes params.yaml, so a bad value stops `dvc exp run -S` before any output is deleted even
without it (DVC then frames it as an "unexpected error"). tests/core/test_hydra_plugin.py pins the
method's signature and source, so a Hydra release that changes it fails there first.
"""

from __future__ import annotations

import functools
import sys

from hydra._internal.hydra import Hydra
from hydra.errors import HydraException
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from pipeline.core import config_schema  # noqa: F401  (registers the whole composition's schema)
from pipeline.core.errors import PipelineError
from pipeline.core.overrides import check_overrides

# lines of OmegaConf's and Hydra's messages that say nothing to a user of this project
_BOOKKEEPING = ("reference_type=", "object_type=", "provider=", "To append to your config")


def _chain(error: BaseException | None, during: bool) -> list[BaseException]:
    """The error and what it was raised from (and, with `during`, what it was raised while
    handling), outermost first."""
    chain: list[BaseException] = []
    while error is not None and error not in chain:
        chain.append(error)
        error = error.__cause__ or (error.__context__ if during else None)
    return chain


def _one_line(error: BaseException) -> str:
    """The error and its causes in one line, without OmegaConf's type bookkeeping; the
    project's own message alone where one of them is the project's (a resolver's check)."""
    ours = [e for e in _chain(error, during=True) if isinstance(e, PipelineError)]
    if ours:
        return str(ours[0])
    kept: list[str] = []
    for line in (line.strip() for e in _chain(error, False) for line in str(e).splitlines()):
        # a cause often repeats its wrapper's message: said once
        if line and not line.startswith(_BOOKKEEPING) and not any(line in k for k in kept):
            kept.append(line)
    return "; ".join(kept)


def checked(compose_config):
    """`Hydra.compose_config` after `check_overrides`; its errors as one-line DvcExceptions."""

    @functools.wraps(compose_config)
    def compose(self: Hydra, config_name: str | None, overrides: list[str], *args, **kwargs):
        from dvc.exceptions import DvcException

        try:
            check_overrides(list(overrides))
            composed = compose_config(self, config_name, overrides, *args, **kwargs)
            OmegaConf.resolve(composed)  # as DVC does next: a resolver's error lands here
            return composed
        except (PipelineError, HydraException, OmegaConfBaseException) as error:
            raise DvcException(f"{_one_line(error)} (params.yaml is unchanged)") from None

    return compose


if "dvc" in sys.modules and not hasattr(Hydra.compose_config, "__wrapped__"):
    Hydra.compose_config = checked(Hydra.compose_config)  # DVC's composition, not a stage's
