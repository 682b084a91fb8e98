"""The finetune stage's figure: the training loss curves, with their caption."""

from __future__ import annotations

import pandas as pd

from pipeline.core.io import Captioned
from pipeline.plotting.figures import loss_curve_figure


def loss_figure(curves: pd.DataFrame, task: str, log_every: int) -> Captioned:
    """The loss curves (columns variant, step, loss) of one task, with their caption."""
    caption = (
        f"{task}: mean training loss every {log_every} steps, one line per trained variant "
        "(finetuned: the pre-trained model; random_init: random weights)."
    )
    return Captioned(loss_curve_figure(curves, task), caption, {})
