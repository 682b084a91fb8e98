"""A stage run's config, read and typed: params.yaml under DVC (with a task's spec), and the
checks every run's config passes (the schema, the bounds, the seeds)."""

from __future__ import annotations

from pathlib import Path

from omegaconf import DictConfig, OmegaConf, open_dict
from omegaconf.errors import OmegaConfBaseException

from pipeline.core import layout, stage_schema
from pipeline.core.bounds import check_bounds
from pipeline.core.config import CONF_DIR, check_option
from pipeline.core.errors import PipelineError
from pipeline.core.schema import seed_in_seeds


def primary_model(repo: Path, task: str) -> Path:
    """The fine-tuned model of `task` for the primary seed of `repo`'s composed config
    (<outputs>/models/<task>/seed<seed>), for scripts outside DVC."""
    cfg = OmegaConf.load(repo / "params.yaml")
    return layout.model(repo / cfg.paths.outputs, task, int(cfg.seed))


def check_seeds(cfg: DictConfig, seed_item: int | None = None) -> None:
    """Fail in one line unless `seeds` holds the primary `seed` (and `--seed`, when given)."""
    seeds = list(cfg.seeds)
    seed_in_seeds(cfg.seed, seeds)
    if seed_item is not None and seed_item not in seeds:
        raise PipelineError(f"--seed {seed_item} is not in `seeds` {seeds}; add it to `seeds`")


def typed(cfg: DictConfig, where: str) -> DictConfig:
    """`cfg` checked against the schema in use (pipeline/core/stage_schema.py); a wrong type,
    an unknown key or a value out of its bound (pipeline/core/bounds.py) fails in one line
    naming it."""
    schema = stage_schema.registered()
    try:
        typed = OmegaConf.merge(OmegaConf.structured(schema), cfg)
    except OmegaConfBaseException as error:
        key = getattr(error, "full_key", None) or "?"
        reason = str(error).splitlines()[0]
        raise PipelineError(f"{where}: bad value for `{key}`: {reason}") from error
    check_bounds(typed, schema)
    return typed


def load_dvc_config(task: str | None) -> DictConfig:
    params = Path("params.yaml")
    if not params.exists():
        raise PipelineError(
            "params.yaml not found in the working folder; run from the repo root "
            "(dvc repro does) or compose it with `dvc exp run`"
        )
    cfg = OmegaConf.load(params)
    if task is not None:
        check_option("task", task)
        with open_dict(cfg):
            cfg.task = OmegaConf.load(CONF_DIR / "task" / f"{task}.yaml")
    return typed(cfg, f"params.yaml (task {task})" if task else "params.yaml")
