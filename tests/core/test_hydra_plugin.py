"""The Hydra plugin (tools/hydra_plugins/dark_secrets_schema.py) wraps a private method,
`Hydra.compose_config`, because no public part of Hydra sees the overrides or the error of a
`compose()` call (its docstring says why). These tests fail first when a Hydra release
changes that method, or the public `compose` stops reaching it; the behaviour it adds is
tested in tests/core/test_config.py (`dvc exp run -S` composition through the plugin)."""

from __future__ import annotations

import hashlib
import importlib
import inspect
import subprocess
import sys

from hydra._internal.hydra import Hydra

from tests.support.paths import REPO

# the method as Hydra 1.3.8 has it, which the wrap's arguments follow
SIGNATURE = (
    "(self, config_name: Optional[str], overrides: List[str], run_mode: hydra.types.RunMode, "
    "with_log_configuration: bool = False, from_shell: bool = True, "
    "validate_sweep_overrides: bool = True) -> omegaconf.dictconfig.DictConfig"
)
SOURCE_SHA256 = "d428b40c83385f6d"  # the first 16 hex digits of its source's digest


def test_the_wrapped_hydra_method_is_the_one_the_plugin_was_written_for() -> None:
    method = inspect.unwrap(Hydra.compose_config)
    assert str(inspect.signature(method)) == SIGNATURE, (
        "Hydra.compose_config changed its arguments: check the plugin's wrap "
        "(tools/hydra_plugins/dark_secrets_schema.py), then update this pin"
    )
    source = hashlib.sha256(inspect.getsource(method).encode()).hexdigest()[:16]
    assert source == SOURCE_SHA256, (
        "Hydra.compose_config changed: check that the plugin's wrap still sees every "
        "override and error, and whether a public route now exists, then update this pin"
    )


def test_hydras_public_compose_reaches_the_wrapped_method() -> None:
    compose = importlib.import_module("hydra.compose").compose
    assert "gh.hydra.compose_config(" in inspect.getsource(compose)


WRAPPED = """
import sys
if sys.argv[1] == "dvc":
    import dvc.exceptions
sys.path.insert(0, "tools")
from hydra.core.plugins import Plugins
Plugins.instance()
from hydra._internal.hydra import Hydra
print(hasattr(Hydra.compose_config, "__wrapped__"))
"""


def test_the_plugin_wraps_the_method_in_dvcs_process_alone() -> None:
    """A stage's Hydra job composes with Hydra as it is; DVC's composition is checked."""
    wrapped = {
        process: subprocess.run(
            [sys.executable, "-c", WRAPPED, process],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for process in ("dvc", "stage")
    }
    assert wrapped == {"dvc": "True", "stage": "False"}
