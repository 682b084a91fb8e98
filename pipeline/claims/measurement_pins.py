"""What pins how each claim is measured, for the registry's digest (registry.py): the
claim-relevant settings by key, the visual labels the pattern classifier learns from, and
every statistic's output on a small committed fixture.

Settings: each claim family names the config keys its measurement depends on (the
`SETTINGS` of its analysis's claims module, pipeline/analyses/<name>/claims.py, by the claim
id's first two parts; `settings_by_family` collects them), read from conf/ as Hydra
composes it under each profile a committed claims table is judged under (`PROFILES`: the
default run's, the standard reference's, the MPNet run's), so a key a profile overrides
(the standard profile's `ablate.num_examples`) is pinned with the value that profile gives
it; a gated claim also depends on the gate's inputs (`GATE_SETTINGS`). Changing any of
them (the label folders the classifier learns from, an example count, a classifier setting,
in conf/<group>/default.yaml or in a profile) changes what a verdict rests on, and moves
the digest.

Labels: the data files a claim's measurement rests on beyond the settings, as its analysis's
claims module declares them (`PINNED`, a `PinnedFiles`: the patterns analyses' label files,
sample file and the share round's frozen stratifier of each folder that
`patterns.labels_from` names, under data/annotations/), by their SHA-256 (`label_pins`). A
new labelling round, or one label changed, moves the shares every share claim reads (and
retrains the classifier), so it moves the digest like a setting does; the folders' maps and
READMEs do not.

Fixture: `registry_fixture/` beside this file is a frozen copy of one run's inputs to the
claims stage for a two-sentence and a one-sentence task (MRPC, SST-2; MiniLM-L6, seed 42).
Every claim declared for those tasks is measured on it, and its statistic, interval and
whether it is resolved enter the digest, each number to `DIGITS` significant digits so
that a CPU's last bits do not move it. Moving or renaming code leaves the outputs, and so
the digest, unchanged; changing what a measure function computes does not.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import OmegaConf

from pipeline.claims.claim import Claim
from pipeline.claims.evaluate import claim_modules
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.rules import Estimate
from pipeline.core import config_schema  # noqa: F401  (registers the typed config)
from pipeline.core.errors import PipelineError

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "conf"
FIXTURE = Path(__file__).with_name("registry_fixture")
FIXTURE_TASKS = ("mrpc", "sst2")  # a two-sentence and a one-sentence task
FIXTURE_SEED = 42
DIGITS = 4  # significant digits of each fixture number in the digest

# the profiles the committed claims tables are judged under, as overrides of conf/config.yaml:
# the default run (outputs/), the standard reference, the MPNet run (outputs/reference/)
PROFILES: dict[str, tuple[str, ...]] = {
    "quick": (),
    "standard": ("experiment=standard",),
    "mpnet-quick": ("model=mpnet_base",),
}


def settings_by_family() -> dict[str, tuple[str, ...]]:
    """Each claim family's config keys, as its analysis's claims module declares them beside
    its claims (`SETTINGS` of pipeline/analyses/<name>/claims.py); a family declared twice
    fails in one line."""
    found: dict[str, tuple[str, ...]] = {}
    for name, module in claim_modules().items():
        for claim_family, keys in module.SETTINGS.items():
            if claim_family in found:
                raise PipelineError(
                    f"claims registry: {claim_family} declares its settings twice (again in "
                    f"pipeline/analyses/{name}/claims.py)"
                )
            found[claim_family] = keys
    return found


# the validity gate (validity.py) reads Table 1's dev rows and the ablation rows' baseline
GATE_SETTINGS = (
    "prepare.max_eval_rows",
    "prepare.min_rows",
    "table1",
    "ablate.num_examples",
    "ablate.num_examples_by_task",
)


def family(claim: Claim) -> str:
    """A claim's family: the first two parts of its id (`kovaleva.types_recur`)."""
    return ".".join(claim.name.split(".")[:2])


def _fingerprint(conf: Path) -> tuple[tuple[str, int, int], ...]:
    """Each config file's name, size and modification time: a composition is reused only
    while conf/ is unchanged."""
    files = sorted(conf.rglob("*.yaml"))
    return tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files)


def composed(profile: str) -> dict[str, Any]:
    """conf/ (`CONF`) as Hydra composes it under `profile` (`PROFILES`)."""
    return _composed(CONF, PROFILES[profile], _fingerprint(CONF))


@cache
def _composed(conf: Path, overrides: tuple[str, ...], _files: tuple) -> dict[str, Any]:
    """conf/ composed by Hydra with `overrides`, resolved to plain values. Inside a Hydra job
    (a stage) the job's own Hydra is set aside while composing, then restored."""
    hydra = GlobalHydra.instance()
    outer = hydra.hydra if hydra.is_initialized() else None
    hydra.clear()
    try:
        with initialize_config_dir(str(conf), version_base=None):
            return OmegaConf.to_container(compose("config", list(overrides)), resolve=True)
    finally:
        hydra = GlobalHydra.instance()
        hydra.clear()
        if outer is not None:
            hydra.initialize(outer)


def setting(key: str, profile: str = "quick") -> Any:
    """The value of `key` (`group.name...`, or a whole `group`) as conf/ (`CONF`) composes it
    under `profile` (`PROFILES`); a key that is not there fails in one line."""
    return _lookup(composed(profile), key, profile)


def _lookup(config: dict[str, Any], key: str, profile: str) -> Any:
    value: Any = config
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            raise PipelineError(
                f"claims registry: conf/ composes no {key!r} under profile {profile!r}; "
                "fix SETTINGS"
            )
        value = value[part]
    return value


def settings(claim: Claim) -> dict[str, dict[str, Any]]:
    """The claim-relevant settings of `claim`, by profile and key; a claim of no family in
    SETTINGS fails in one line (every registered claim must say what its measurement depends
    on)."""
    declared = settings_by_family()
    if family(claim) not in declared:
        raise PipelineError(
            f"claims registry: {claim.name} has no entry in the SETTINGS of its analysis's "
            "claims module (pipeline/analyses/<name>/claims.py): name the settings its "
            "measurement reads"
        )
    keys = declared[family(claim)] + (GATE_SETTINGS if claim.gated and claim.finetuned else ())
    configs = {profile: composed(profile) for profile in PROFILES}  # conf/ read once each
    return {
        profile: {key: _lookup(configs[profile], key, profile) for key in sorted(set(keys))}
        for profile in PROFILES
    }


# what each judged profile's tables rest on beyond each claim's own SETTINGS: these keys and
# groups whole (the seeds, the sample of rows, the fine-tuning recipe), and every setting
# whose name says it sizes a sample (`SAMPLE_SIZE`), in whichever group it is
RECIPE = ("seed", "seeds", "shared", "prepare", "finetune")
SAMPLE_SIZE = re.compile(r"(examples|rows|sentences|per_class|resamples)$")


def _flat(value: Any, where: str = "") -> dict[str, Any]:
    """A composed config's leaves by dotted key (an empty mapping is a leaf)."""
    if not isinstance(value, dict) or not value:
        return {where: value}
    return {
        key: leaf
        for name, item in value.items()
        for key, leaf in _flat(item, f"{where}.{name}" if where else str(name)).items()
    }


def profile_pins() -> dict[str, dict[str, Any]]:
    """Per judged profile (`PROFILES`), the settings its tables rest on (`RECIPE`,
    `SAMPLE_SIZE`) as conf/ composes them, by dotted key."""
    return {
        profile: {
            key: value
            for key, value in sorted(_flat(composed(profile)).items())
            if key.split(".")[0] in RECIPE or SAMPLE_SIZE.search(key.split(".")[-1])
        }
        for profile in PROFILES
    }


@dataclass(frozen=True)
class PinnedFiles:
    """Data files a claim's measurement rests on (module docstring): `files` of each folder
    that config key `setting` names under any profile, the folders under `under` (relative
    to the checkout)."""

    setting: str
    under: str
    files: tuple[str, ...]


def pinned_files() -> list[PinnedFiles]:
    """Every `PINNED` the analyses' claims modules declare."""
    found = (getattr(module, "PINNED", None) for module in claim_modules().values())
    return [pinned for pinned in found if pinned is not None]


def label_pins() -> dict[str, dict[str, str]]:
    """SHA-256 of each pinned file (`pinned_files`) of each folder its setting names under
    any profile (module docstring), by folder and file; a folder that is missing fails in
    one line."""
    pins = {}
    for pinned in pinned_files():
        folders = dict.fromkeys(n for p in PROFILES for n in setting(pinned.setting, p))
        for name in folders:
            folder = ROOT / pinned.under / name
            if not folder.is_dir():
                raise PipelineError(f"claims registry: no folder {folder}; fix {pinned.setting}")
            pins[name] = {
                file: hashlib.sha256((folder / file).read_bytes()).hexdigest()
                for file in pinned.files
                if (folder / file).exists()
            }
    return pins


def _rounded(value: float) -> str:
    return f"{value:.{DIGITS}g}"


def estimate_pin(m: Estimate) -> list[Any]:
    """Every input a rule, `settle` and the power check read of a measured statistic:
    [statistic, ci_low, ci_high, 'resolved' | 'unresolved', critical, evidence], each number
    rounded (`DIGITS`), the evidence by name; the note (words) is left out."""
    numbers = [_rounded(v) for v in (m.statistic, m.ci_low, m.ci_high)]
    evidence = {name: _rounded(float(value)) for name, value in m.evidence.items()}
    return [
        *numbers,
        "unresolved" if m.unresolved else "resolved",
        _rounded(m.critical),
        evidence,
    ]


def fixture_outputs(claims: list[Claim], fixture: Path = FIXTURE) -> dict[str, list[Any]]:
    """Each claim's measured statistic on the fixture (module docstring), by claim id, as
    `estimate_pin` gives it."""
    out = StageOutputs(fixture)
    return {claim.name: estimate_pin(claim.measure(out, FIXTURE_SEED)) for claim in claims}
