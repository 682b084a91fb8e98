"""The offline data sets the stages read, resolved once, and their digests.

Each data set (a name of `DATA_SOURCES`, pipeline/core/layout.py) resolves from the config
and the environment to a folder and the files in it that its reader opens: GLUE (the
`tasks`' labelled splits in glue_data), UD English EWT (train and dev), GAP (development and
validation) and FrameNet 1.5 (the release, packed or unpacked). The readers (prepare,
clark_syntax, clark_coref, framenet_data) take their folder from here; the data_sources
stage writes a digest of each set's files (name, size, SHA-256) that the reader depends on,
so that an edit of a data file, or `DARK_SECRETS_DATA` pointing at other data, reruns the
readers.

A missing folder or file fails in one line that names where the folder came from (an
environment variable or a config key) and how to point it elsewhere.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.core.config import glue_dir, shared_data_dir
from pipeline.core.errors import PipelineError
from pipeline.core.layout import DATA_SOURCES
from pipeline.core.schema import load_task

if TYPE_CHECKING:  # the readers' settings, as types only: a stage depends on its own alone
    from pipeline.analyses.clark_coref.settings import ClarkCorefConfig
    from pipeline.analyses.clark_syntax.settings import ClarkSyntaxConfig
    from pipeline.analyses.framenet.settings import FramenetConfig
    from pipeline.analyses.prepare.settings import PrepareConfig

CHUNK = 1 << 20  # bytes read at a time while hashing


@dataclass(frozen=True)
class DataSource:
    """One data set: its folder, the files of it a stage reads, and where the folder came
    from (said in every error about it)."""

    name: str
    folder: Path
    files: tuple[Path, ...]  # relative to `folder`
    origin: str  # e.g. "glue_data in DARK_SECRETS_DATA=/data"
    fix: str  # how to point it elsewhere

    def check(self) -> None:
        """Fail in one line unless every file exists."""
        for relative in self.files:
            path = self.folder / relative
            if not path.exists():
                raise PipelineError(
                    f"{self.name} file not found: {path} ({self.origin}); {self.fix}"
                )

    def digest(self) -> dict[str, object]:
        """Every file's size and SHA-256 by its path within the folder (never the folder's
        own path: two copies of the same data digest alike)."""
        self.check()
        files = {}
        for relative in sorted(self.files):
            files[relative.as_posix()] = _file_digest(self.folder / relative)
        return {"source": self.name, "files": files}


def _file_digest(path: Path) -> dict[str, object]:
    sha = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(CHUNK):
            sha.update(block)
    return {"bytes": path.stat().st_size, "sha256": sha.hexdigest()}


def _shared(shared_data: str) -> tuple[Path, str]:
    """The shared data folder and where it came from: $DARK_SECRETS_DATA, else
    `paths.shared_data`."""
    env = os.environ.get("DARK_SECRETS_DATA")
    if env is not None and env.strip() == "":
        raise PipelineError(
            "DARK_SECRETS_DATA is set but empty; set it to the folder of the offline data sets "
            f"or unset it to use paths.shared_data ({shared_data})"
        )
    origin = f"DARK_SECRETS_DATA={env}" if env else f"paths.shared_data={shared_data}"
    return shared_data_dir(shared_data), origin


SHARED_FIX = "point DARK_SECRETS_DATA (or paths.shared_data) at the folder of the offline data sets"


def _within_shared(
    shared_data: str, name: str, folder: str, explicit: str | None, key: str
) -> tuple[Path, str, str]:
    """(folder, origin, fix) of a data set that lies in `folder` of the shared data folder
    unless `explicit` (config key `key`) names its own."""
    if explicit:
        return Path(explicit), f"{key}={explicit}", f"set {key} to the {name} folder"
    shared, origin = _shared(shared_data)
    return shared / folder, f"{folder} in {origin}", SHARED_FIX


def glue(
    shared_data: str, glue_dir_setting: str | None, prepare: PrepareConfig, task_names: list[str]
) -> DataSource:
    """The glue_data folder ($GLUE_DIR, else `paths.glue_dir`, else glue_data in the shared
    data folder; `shared_data` and `glue_dir_setting` are `paths.shared_data` and
    `paths.glue_dir`) and the labelled splits of every task of `task_names` (none with
    `prepare.source=hub`)."""
    env = os.environ.get("GLUE_DIR")
    if env:
        origin, fix = f"GLUE_DIR={env}", "set GLUE_DIR to a glue_data folder"
    else:
        _, origin, fix = _within_shared(
            shared_data, "glue_data", "glue_data", glue_dir_setting, "paths.glue_dir"
        )
    folder = glue_dir(glue_dir_setting, shared_data)
    files: tuple[Path, ...] = ()
    if prepare.source == "local":
        tasks = [load_task(name) for name in task_names]
        files = tuple(Path(t.local.folder, f) for t in tasks for f in t.local.files.values())
    fix += ", or use prepare.source=hub where the Hugging Face hub is reachable"
    return DataSource("GLUE", folder, files, origin, fix)


def ud(shared_data: str, syntax: ClarkSyntaxConfig) -> DataSource:
    """UD English EWT (`clark_syntax.ud.dir`, else ud_english_ewt in the shared data folder):
    its train and dev treebanks."""
    folder, origin, fix = _within_shared(
        shared_data, "UD treebank", "ud_english_ewt", syntax.ud.dir, "clark_syntax.ud.dir"
    )
    files = tuple(
        Path(found.name)
        for split in ("train", "dev")
        for found in sorted(folder.glob(f"*-ud-{split}.conllu"))
    )
    if not files:
        raise PipelineError(
            f"no *-ud-train.conllu or *-ud-dev.conllu in {folder} ({origin}); {fix}"
        )
    return DataSource("UD", folder, files, origin, fix)


def gap(shared_data: str, coref: ClarkCorefConfig) -> DataSource:
    """GAP (`clark_coref.dir`, else gap_coreference in the shared data folder): its
    development and validation files."""
    folder, origin, fix = _within_shared(
        shared_data, "GAP", "gap_coreference", coref.dir, "clark_coref.dir"
    )
    files = (Path("gap-development.tsv"), Path("gap-validation.tsv"))
    return DataSource("GAP", folder, files, origin, fix)


def framenet(shared_data: str, settings: FramenetConfig) -> DataSource:
    """FrameNet 1.5 (`framenet.source` in the shared data folder, or absolute): the packed
    release, or every file of the unpacked one."""
    source = Path(settings.source)
    if source.is_absolute():
        folder, origin, fix = source.parent, f"framenet.source={source}", "set framenet.source"
    else:
        shared, shared_origin = _shared(shared_data)
        folder = (shared / source).parent
        origin, fix = f"framenet.source={source} in {shared_origin}", SHARED_FIX
    release = folder / source.name
    if release.is_dir():
        files = tuple(p.relative_to(folder) for p in sorted(release.rglob("*")) if p.is_file())
    else:
        files = (Path(source.name),)
    return DataSource("FrameNet", folder, files, origin, fix)


def every_source(
    shared_data: str,
    glue_dir_setting: str | None,
    prepare: PrepareConfig,
    task_names: list[str],
    syntax: ClarkSyntaxConfig,
    coref: ClarkCorefConfig,
    settings: FramenetConfig,
) -> dict[str, DataSource]:
    """Every data set of `DATA_SOURCES` by name, as the settings and the environment place it."""
    found = {
        "glue": glue(shared_data, glue_dir_setting, prepare, task_names),
        "ud": ud(shared_data, syntax),
        "gap": gap(shared_data, coref),
        "framenet": framenet(shared_data, settings),
    }
    assert tuple(found) == DATA_SOURCES, "a data set of DATA_SOURCES without its resolver"
    return found
