"""Training-curve figure for the finetune stage."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns


def loss_curve_figure(curves: pd.DataFrame, task: str) -> plt.Figure:
    """Mean training loss per logging window (columns variant, step, loss), one line per variant."""
    figure, axis = plt.subplots(figsize=(5, 3.2))
    sns.lineplot(data=curves, x="step", y="loss", hue="variant", marker="o", ax=axis)
    axis.set_title(f"{task}: training loss")
    return figure
