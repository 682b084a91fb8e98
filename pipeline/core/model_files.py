"""A model's identity by its files: the sha256 of every file of the local folder that
`model.name_or_path` (and a separate `model.tokenizer`) resolves to, pkg:// included, so new
weights under the same path key new inputs. A hub id gives nothing (its revision is the
user's to pin); a tiny random model (`random_config`) has no files. Each file is hashed once
a process while its size and modification time stay the same."""

from __future__ import annotations

import hashlib
import importlib.util
from functools import cache
from pathlib import Path

from pipeline.core.schema import ModelConfig

CHUNK_BYTES = 1 << 20
SKIPPED_DIRS = frozenset({"__pycache__"})  # bytecode a package install may leave beside


@cache
def _file_sha256(path: Path, size: int, mtime_ns: int) -> str:
    """The sha256 of `path`'s bytes, streamed; keyed by its size and mtime so a file rewritten
    in this process is hashed again."""
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK_BYTES):
            sha.update(chunk)
    return sha.hexdigest()


def folder_digest(folder: Path) -> str:
    """The sha256 over each file's path (relative to `folder`) and content digest."""
    sha = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder)
        if SKIPPED_DIRS.intersection(relative.parts):
            continue
        stat = path.stat()
        content = _file_sha256(path, stat.st_size, stat.st_mtime_ns)
        sha.update(f"{relative.as_posix()}\0{content}\n".encode())
    return sha.hexdigest()


def package_folder(spec: str) -> Path | None:
    """The folder `pkg://package/sub/folder` names inside the installed package; None when the
    package is not installed (loading the model then names the package to install)."""
    package, _, sub = spec.removeprefix("pkg://").partition("/")
    found = importlib.util.find_spec(package)
    return None if found is None or found.origin is None else Path(found.origin).parent / sub


def local_folder(spec: str | None) -> Path | None:
    """The local folder `spec` (a folder or pkg://) names; None for a hub id or no spec."""
    if spec is None:
        return None
    where = package_folder(spec) if spec.startswith("pkg://") else Path(spec)
    return where if where is not None and where.is_dir() else None


def files_digest(model: ModelConfig) -> str | None:
    """The digest of the model's local files (weights, config, tokenizer); None when it has
    none (a hub id, or a random model built from its config)."""
    if model.random_config is not None:
        return None
    folders = {local_folder(model.name_or_path), local_folder(model.tokenizer)}
    digests = sorted(folder_digest(f) for f in folders if f is not None)
    if not digests:
        return None
    return hashlib.sha256("\n".join(digests).encode()).hexdigest()
