"""A GLUE split as model inputs: encoded rows with their gold labels, checked against the task."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from transformers import PreTrainedTokenizerBase

from pipeline.core.errors import PipelineError
from pipeline.core.schema import TaskConfig
from pipeline.data.encoding import encode


@dataclass(frozen=True)
class LabelledRows:
    """Encoded rows (input_ids and token_type_ids, unpadded) and their gold labels."""

    rows: list[dict[str, list[int]]]
    labels: np.ndarray  # [N] class indices, or float scores for a regression task

    def __len__(self) -> int:
        return len(self.rows)


def check_labels(task: TaskConfig, labels: np.ndarray, where: str) -> None:
    """Fail when the data's labels do not fit the task's label set."""
    if task.is_regression:
        return
    seen = set(np.unique(labels).tolist())
    allowed = set(range(task.num_labels))
    if not seen <= allowed:
        raise PipelineError(
            f"{where}: labels {sorted(seen - allowed)} do not fit {task.name}'s "
            f"{task.num_labels} classes {list(task.label_names or ())}"
        )


def labelled_rows(
    tokenizer: PreTrainedTokenizerBase,
    task: TaskConfig,
    frame: pd.DataFrame,
    max_length: int,
    where: str,
) -> LabelledRows:
    """The rows of a prepared split (`where` names it in errors), truncated to `max_length`."""
    labels = frame["label"].to_numpy()
    check_labels(task, labels, where)
    return LabelledRows(encode(tokenizer, task, frame, max_length), labels)
