"""The analyze stage's work for one task: Kovaleva et al. Figs. 5, 6, 7 and 10 from its store.

`analyze_task` reads the pre-trained and fine-tuned maps of the same dev examples from an
attention store, tags their tokens with spaCy, and returns the four tables the stage writes
and its headline metrics. The tables and metrics number layers and heads from 1 (`L3-H5`),
as the paper does; the functions they come from (`tables`, `measures`) count from 0.
`settings.measure` chooses the maps analysed: the weights (the paper), the value-weighted
norms or the rollout (pipeline/attention/measures.py; rollout: one "head" per layer).
Every mean over examples carries its 95% percentile bootstrap interval over examples
(`_ci_low`, `_ci_high`; `settings.bootstrap_resamples` resamples, seeded).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pandas as pd

from pipeline.analyses.analyze.settings import AnalyzeConfig
from pipeline.attention.measures import measure_store
from pipeline.attention.store import AttentionStore
from pipeline.core.head_names import head_name, layer_name, numbered_from_one
from pipeline.core.stats import Interval
from pipeline.kovaleva.linguistic import (
    SPECIAL_TYPES,
    example_type_masks,
    load_spacy,
)
from pipeline.kovaleva.tables import (
    CosineSummary,
    cosine_summary,
    example_cosines,
    grid_example,
    grid_table,
    shared_examples,
    token_type_tables,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TaskAnalysis:
    """What `analyze_task` gives the stage to write; layers and heads numbered from 1."""

    task: str
    examples: list[int]  # the analysed dev examples, by id
    cosine: pd.DataFrame  # Fig. 5, per head: layer, head, cosine (+ CI), examples
    cosine_layers: pd.DataFrame  # Fig. 5 per layer: layer, cosine (+ CI), examples
    token_types: pd.DataFrame  # Fig. 6, per variant, type and head: ..., score (+ CI), examples
    token_type_layers: pd.DataFrame  # Fig. 6 per variant, type and layer (mean over heads)
    cls_last_layer: pd.DataFrame  # Fig. 7: the columns of token_types, the last layer only
    grid_variant: str
    grid_example: int  # Fig. 10's example id
    grid_tokens: list[str]  # its word pieces
    grid: pd.DataFrame  # Fig. 10, per layer, head, query and key: tokens and weight
    metrics: dict[str, float | int | str]

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables by file stem."""
        return {
            "cosine": self.cosine,
            "cosine_layers": self.cosine_layers,
            "token_types": self.token_types,
            "token_type_layers": self.token_type_layers,
            "cls_last_layer": self.cls_last_layer,
            "grid_example": self.grid,
        }


def analyze_task(
    store: AttentionStore, task: str, settings: AnalyzeConfig, *, seed: int = 0
) -> TaskAnalysis:
    """Figs. 5, 6, 7 and 10 of `task` over the first `settings.num_examples` examples that
    both variants of `store` hold, on the maps of `settings.measure`; `seed` seeds the
    bootstrap."""
    store = measure_store(store, settings.measure)
    examples = shared_examples(store, task, settings.num_examples)
    chunk, resamples = settings.chunk_examples, settings.bootstrap_resamples
    cosine = cosine_summary(example_cosines(store, task, examples, chunk), resamples, seed)

    infos = {e: store.tokens(task, e) for e in examples}
    log.info("%s: tagging %d examples with spaCy %s", task, len(infos), settings.spacy_model)
    masks = example_type_masks(infos, load_spacy(settings.spacy_model), settings.token_types)
    type_names = [*SPECIAL_TYPES, *settings.token_types]
    types = token_type_tables(store, task, examples, masks, type_names, chunk, resamples, seed)

    example_id = grid_example(infos, settings.grid.max_tokens)
    maps = store.maps(settings.grid.variant, task, examples=[example_id])[example_id]  # [L,H,n,n]
    grid = grid_table(maps, infos[example_id].tokens)

    metrics = headline_metrics(cosine, types.received, types.cls)
    metrics["examples"] = len(examples)
    log.info("%s: most changed layer %s", task, metrics["cosine.most_changed_layer"])
    return TaskAnalysis(
        task=task,
        examples=examples,
        cosine=numbered_from_one(cosine.heads),
        cosine_layers=numbered_from_one(cosine.layers),
        token_types=numbered_from_one(types.received),
        token_type_layers=numbered_from_one(types.received_layers),
        cls_last_layer=numbered_from_one(types.cls),
        grid_variant=settings.grid.variant,
        grid_example=example_id,
        grid_tokens=infos[example_id].tokens,
        grid=numbered_from_one(grid),
        metrics=metrics,
    )


def headline_metrics(
    cosine: CosineSummary, received: pd.DataFrame, cls: pd.DataFrame
) -> dict[str, float | int | str]:
    """Flat metrics of the 0-based tables: the mean cosine overall and per layer
    (`cosine.L1`) and `cosine.last_two_margin` (three layers or more), each with its
    interval (`_ci_low`, `_ci_high`), the most changed layer, and per table, variant and
    special token the top head (`received.pretrained.cls.top_head` = "L3-H5") and its
    score."""
    layers = cosine.layers.set_index("layer")
    metrics: dict[str, float | int | str] = {
        **cosine.mean.as_dict("cosine.mean"),
        "cosine.most_changed_layer": layer_name(layers["cosine"].idxmin()),
    }
    if cosine.margin is not None:
        metrics.update(cosine.margin.as_dict("cosine.last_two_margin"))
    for layer, row in layers.iterrows():
        interval = Interval(*(float(row[c]) for c in ("cosine", "cosine_ci_low", "cosine_ci_high")))
        metrics.update(interval.as_dict(f"cosine.{layer_name(layer)}"))
    for name, table in (("received", received), ("cls_last_layer", cls)):
        for (variant, kind), part in table.groupby(["variant", "type"], sort=False):
            if kind not in SPECIAL_TYPES:
                continue
            best = part.loc[part["score"].idxmax()]
            key = f"{name}.{variant}.{kind.strip('[]').lower()}"
            metrics[f"{key}.top_score"] = float(best["score"])
            metrics[f"{key}.top_head"] = head_name(best["layer"], best["head"])
    return metrics
