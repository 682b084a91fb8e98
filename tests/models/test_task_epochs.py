"""`finetune.epochs_by_task`: a task named there trains for its own epochs, every other task for
`epochs`; the quick profile gives MRPC its third epoch (docs/benchmarks.md#learning-curves)."""

from __future__ import annotations

from omegaconf import OmegaConf

from benchmarks.bench_cost import profile_params
from pipeline.analyses.finetune.settings import FinetuneConfig
from pipeline.core.schema import typed


def quick_finetune() -> FinetuneConfig:
    return typed(FinetuneConfig, OmegaConf.create(profile_params("quick")["finetune"]))


def test_a_task_named_trains_for_its_own_epochs_and_the_rest_for_epochs():
    settings = quick_finetune()
    assert settings.epochs == 2
    assert settings.for_task("mrpc").epochs == 3
    assert settings.for_task("rte").epochs == settings.epochs
    assert settings.for_task("mrpc").learning_rate == settings.learning_rate
