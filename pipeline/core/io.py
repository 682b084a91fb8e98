"""Atomic writes: every output appears whole under its final name or not at all; numbers
written as text (JSON metrics, CSV tables) at `SIGNIFICANT_DIGITS`."""

from __future__ import annotations

import contextlib
import errno
import glob
import json
import math
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from pipeline.core import owner
from pipeline.core.errors import PipelineError

# The precision of every float written as text (metrics and other JSON, CSV tables): 6
# significant digits, and no digit below 1e-12 (docs/comparing-runs.md, Precision of
# metrics). Fine enough for two scores one example apart on the largest GLUE dev set, and
# for every 95% interval the stages report; coarse enough that float64 rounding that differs
# between CPUs (~1e-16 of a value, or noise around an exact zero) is not written.
SIGNIFICANT_DIGITS = 6
DECIMALS = 12  # the last decimal place written: 1e-12


@contextlib.contextmanager
def atomic_path(target: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside `target`; rename it onto `target` if the block succeeds.

    Works for files and folders. A failure (or a killed process) leaves `target` as it was.
    A temporary's name holds its writer (pipeline/core/owner.py): the next write removes
    those a writer that has ended left beside `target`, never a live one's. A full disk, met
    anywhere from making the folder to the rename, fails in one line naming `target`; what a
    failure removes is the temporary this write made, nothing else.
    """
    target = Path(target)
    tmp: Path | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(target)
        tmp = _new_temporary(target)
        yield tmp
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except OSError as error:
        if error.errno == errno.ENOSPC:
            raise PipelineError(
                f"no space left on the disk of {target} while writing it; free some there, "
                "or point paths.outputs (paths.runs, hydra.run.dir) at another disk"
            ) from error
        raise
    finally:
        if tmp is not None:
            _remove_temporary(tmp)


def _new_temporary(target: Path) -> Path:
    """A free name beside `target` that holds this writer (`.<name>.<owner>.<random>.tmp`),
    reserved by mkstemp and left free for the writer to make a file or a folder there."""
    prefix = f".{target.name}.{owner.this_process()}."
    fd, name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=target.parent)
    os.close(fd)
    Path(name).unlink()
    return Path(name)


def _remove_temporary(tmp: Path) -> None:
    """Remove what a writer left at its temporary name: a link itself (never what it points
    to), a file, or a folder it made there."""
    if tmp.is_symlink() or tmp.is_file():
        tmp.unlink()
    elif tmp.is_dir():
        shutil.rmtree(tmp, ignore_errors=True)


def remove_stale_temporaries(target: Path) -> None:
    """Delete the `.<name>.<owner>.*.tmp` files and folders beside `target` whose writer has
    ended (killed before it renamed them)."""
    start = len(target.name) + 2
    for stale in target.parent.glob(f".{glob.escape(target.name)}.*.tmp"):
        writer = stale.name[start:].removesuffix(".tmp").rpartition(".")[0]
        if not owner.is_dead(writer):
            continue
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale, ignore_errors=True)
        else:
            stale.unlink(missing_ok=True)


def write_text(path: str | Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def at_precision(data: Any) -> Any:
    """`data` with every float (in dicts, lists and tuples too) rounded to `DECIMALS`
    decimal places, then to `SIGNIFICANT_DIGITS` significant digits (-0.0 as 0.0);
    integers, booleans, strings, NaN and infinities unchanged."""
    if isinstance(data, float):
        if not math.isfinite(data):
            return data
        return float(f"{round(data, DECIMALS):.{SIGNIFICANT_DIGITS}g}") + 0.0
    if isinstance(data, dict):
        return {key: at_precision(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [at_precision(value) for value in data]
    return data


def write_json(path: str | Path, data: Any) -> None:
    """Write `data` as pretty JSON (sorted keys, so diffs stay small), its floats at
    `SIGNIFICANT_DIGITS` (`at_precision`): what every metrics file goes through."""
    write_text(path, json.dumps(at_precision(data), indent=2, sort_keys=True) + "\n")


def _csv_float(value: float) -> str:
    return f"{at_precision(value):.{SIGNIFICANT_DIGITS}g}"


def write_table(path: str | Path, frame: Any) -> None:
    """Write a pandas DataFrame as CSV (for DVC plots) or Parquet, by the file's suffix."""
    path = Path(path)
    with atomic_path(path) as tmp:
        if path.suffix == ".parquet":
            frame.to_parquet(tmp, index=False)
        else:
            frame.to_csv(tmp, index=False, float_format=_csv_float)


class Captioned(NamedTuple):
    """A figure (matplotlib), the caption the report shows under it and the settings it was
    drawn from: what every figure function of a package hands its stage."""

    figure: Any
    caption: str
    config: dict


def save_figure(
    path: str | Path,
    figure: Any,
    caption: str,
    config: dict | None = None,
    dpi: int = 120,
) -> None:
    """Save a matplotlib figure atomically, close it, and write its caption beside it.

    The sidecar `<name>.json` ({"caption", "config"}) is what the report shows under the
    figure: one or two sentences saying what is plotted, and the settings it came from.
    """
    import matplotlib.pyplot as plt

    path = Path(path)
    with atomic_path(path) as tmp:
        figure.savefig(tmp, dpi=dpi, bbox_inches="tight", format=path.suffix.lstrip("."))
    plt.close(figure)
    write_json(path.with_suffix(".json"), {"caption": caption, "config": config or {}})


def write_results(
    tables_in: Path,
    figures_in: Path,
    metrics_to: Path,
    *,
    tables: Mapping[str, Any] | None = None,
    figures: Mapping[str, Captioned] | None = None,
    metrics: Mapping[str, Any] | None = None,
    texts: Mapping[str, str] | None = None,
    config: Mapping[str, Any] | None = None,
) -> None:
    """The one writer of a stage's results, by file stem: `tables` to <tables_in>/<stem>.csv
    and `texts` by file name beside them, `figures` to <figures_in>/<stem>.png with their
    caption (each figure's config over `config`), `metrics` to `metrics_to`."""
    for name, text in (texts or {}).items():
        write_text(tables_in / name, text)
    for name, table in (tables or {}).items():
        write_table(tables_in / f"{name}.csv", table)
    for name, drawn in (figures or {}).items():
        path = figures_in / f"{name}.png"
        save_figure(path, drawn.figure, drawn.caption, {**(config or {}), **drawn.config})
    if metrics is not None:
        write_json(metrics_to, metrics)
