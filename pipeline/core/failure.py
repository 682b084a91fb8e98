"""What a stage that stopped prints last: the one command that brings back the outputs DVC
removed before running it, and, after Ctrl-C, where the next run resumes.

DVC deletes a stage's outputs before its command runs, so a failed `dvc repro` leaves them
gone while dvc.lock still records them: `dvc checkout <stage>` restores the cached ones and
`git checkout HEAD -- <paths>` the ones kept in git (tables, figures, metrics). The costly
cached outputs (models, attention stores, the pattern classifier) are declared `persist` and
written whole under a temporary name, so DVC leaves them in place and a failed run keeps them.
"""

from __future__ import annotations

from pathlib import Path

import yaml

ITEMS = {"task": "${item.task}", "seed": "${item.seed}"}  # dvc.yaml's matrix placeholders


def restore_command(
    name: str, task: str | None, seed: int | None, dvc_yaml: Path = Path("dvc.yaml")
) -> str | None:
    """The command that restores the outputs of stage `name` (of `task` and `seed` for a
    matrix stage) that DVC removed before the run, as dvc.lock last recorded them; None when
    dvc.yaml does not declare the stage or it removes nothing."""
    if not dvc_yaml.exists():
        return None
    spec = (yaml.safe_load(dvc_yaml.read_text(encoding="utf-8")).get("stages") or {}).get(name)
    if spec is None:
        return None
    values = {"task": task, "seed": None if seed is None else str(seed)}
    matrix = [key for key in spec.get("matrix", {}) if key in values]
    address = name + (f"@{'-'.join(str(values[k]) for k in matrix)}" if matrix else "")

    def concrete(path: str) -> str:
        for key, placeholder in ITEMS.items():
            path = path.replace(placeholder, str(values[key]))
        return path

    in_git, from_cache = [], False
    for entry in [*spec.get("outs", []), *spec.get("metrics", [])]:
        path, options = next(iter(entry.items())) if isinstance(entry, dict) else (entry, {})
        if options.get("cache") is False:
            in_git.append(concrete(path))
        elif not options.get("persist"):  # a persisted output is kept while the stage runs
            from_cache = True
    commands = [f"dvc checkout {address}"] if from_cache else []
    commands += [f"git checkout HEAD -- {' '.join(in_git)}"] if in_git else []
    return " && ".join(commands) or None


def close_progress_bars() -> None:
    """Close the progress bars a stopped stage left open, so that the lines it prints last
    start on lines of their own (an open bar ends without a newline)."""
    from tqdm import tqdm

    for bar in list(getattr(tqdm, "_instances", ())):
        bar.close()


def restore_line(command: str) -> str:
    return f"restore the outputs DVC removed before this run: {command}"


def interrupted_line(checkpoints: Path | None) -> str:
    """The one line Ctrl-C prints: where the next run resumes, if it keeps checkpoints."""
    if checkpoints is not None and checkpoints.exists():
        return f"interrupted; the next run resumes from the checkpoints in {checkpoints}"
    return "interrupted; the next run starts this stage again"
