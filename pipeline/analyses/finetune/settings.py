"""The `finetune` config group's schema; its values are conf/finetune/default.yaml."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from omegaconf import MISSING

from pipeline.analyses.groups import Settings
from pipeline.core.bounds import bounded
from pipeline.core.schema import Task


@dataclass
class Baselines:
    pretrained_no_finetune: bool = MISSING
    random_init: bool = MISSING


@dataclass
class FinetuneConfig:
    epochs: int = bounded(least=1)
    batch_size: int = MISSING
    eval_batch_size: int = MISSING
    learning_rate: float = bounded(above=0)
    warmup_ratio: float = bounded(least=0, most=1)  # of the training steps
    weight_decay: float = bounded(least=0)
    grad_clip: float = MISSING
    log_every: int = bounded(least=1)
    checkpoint_every: int = bounded(least=0)  # steps between resumable checkpoints; 0: none
    baselines: Baselines = field(default_factory=Baselines)
    epochs_by_task: dict[Task, int] = bounded(least=1)  # per task, epochs in place of `epochs`

    def for_task(self, task: str) -> FinetuneConfig:
        """These settings as `task` trains with them: its own epochs where `epochs_by_task`
        names it."""
        epochs = {str(name): count for name, count in self.epochs_by_task.items()}
        return replace(self, epochs=epochs.get(task, self.epochs))

    @property
    def variants(self) -> tuple[str, ...]:
        """The variants trained or scored: `finetuned`, then the baselines switched on."""
        wanted = {
            "pretrained": self.baselines.pretrained_no_finetune,
            "random_init": self.baselines.random_init,
        }
        return ("finetuned", *(name for name, on in wanted.items() if on))


SETTINGS = Settings("finetune", FinetuneConfig)
