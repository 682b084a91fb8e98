"""The analyze stage's work for one task: Kovaleva et al. Figs. 5, 6, 7 and 10 from its store.

`analyze_task` reads the pre-trained and fine-tuned maps of the same dev examples from an
attention store, tags their tokens with spaCy, and returns the four tables the stage writes
and its headline metrics. The tables and metrics number layers and heads from 1 (`L3-H5`),
as the paper does; the functions they come from (`tables`, `measures`) count from 0.
`settings.measure` chooses the maps analysed: the weights (the paper), the value-weighted
norms or the rollout (pipeline/attention/measured.py; rollout: one "head" per layer).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pandas as pd
from omegaconf import DictConfig, OmegaConf

from pipeline.attention.measured import check_measure, measured_store
from pipeline.attention.store import AttentionStore
from pipeline.core.heads import head_name, layer_name, numbered_from_one
from pipeline.kovaleva.linguistic import (
    SPECIAL_TYPES,
    TypeRule,
    example_type_masks,
    load_spacy,
    parse_rules,
)
from pipeline.kovaleva.tables import (
    cosine_table,
    grid_example,
    grid_table,
    shared_examples,
    token_type_tables,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AnalyzeSettings:
    """The `analyze` config group."""

    num_examples: int | None  # the first examples of the store analysed; None: all
    chunk_examples: int  # examples read from the store at a time
    spacy_model: str
    token_types: dict[str, TypeRule]  # linguistic types, in drawing order
    grid_variant: str  # Fig. 10's model variant
    grid_max_tokens: int  # Fig. 10's example: the first with at most this many pieces
    measure: str = "weights"  # maps analysed: weights, norms or rollout

    @classmethod
    def from_config(cls, node: DictConfig) -> AnalyzeSettings:
        check_measure(node.measure)
        return cls(
            num_examples=node.num_examples,
            chunk_examples=node.chunk_examples,
            spacy_model=node.spacy_model,
            token_types=parse_rules(OmegaConf.to_container(node.token_types, resolve=True)),
            grid_variant=str(node.grid.variant),
            grid_max_tokens=node.grid.max_tokens,
            measure=node.measure,
        )


@dataclass(frozen=True)
class TaskAnalysis:
    """What `analyze_task` gives the stage to write; layers and heads numbered from 1."""

    task: str
    examples: list[int]  # the analysed dev examples, by id
    cosine: pd.DataFrame  # Fig. 5, per head: layer, head, cosine, examples
    token_types: pd.DataFrame  # Fig. 6, per variant, type and head: ..., score, examples
    cls_last_layer: pd.DataFrame  # Fig. 7: the same columns, the last layer only
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
            "token_types": self.token_types,
            "cls_last_layer": self.cls_last_layer,
            "grid_example": self.grid,
        }


def analyze_task(store: AttentionStore, task: str, settings: AnalyzeSettings) -> TaskAnalysis:
    """Figs. 5, 6, 7 and 10 of `task` over the first `settings.num_examples` examples that
    both variants of `store` hold, on the maps of `settings.measure`."""
    store = measured_store(store, settings.measure)
    examples = shared_examples(store, task, settings.num_examples)
    chunk = settings.chunk_examples
    cosine = cosine_table(store, task, examples, chunk)

    infos = {e: store.tokens(task, e) for e in examples}
    log.info("%s: tagging %d examples with spaCy %s", task, len(infos), settings.spacy_model)
    masks = example_type_masks(infos, load_spacy(settings.spacy_model), settings.token_types)
    type_names = [*SPECIAL_TYPES, *settings.token_types]
    received, cls = token_type_tables(store, task, examples, masks, type_names, chunk)

    example_id = grid_example(infos, settings.grid_max_tokens)
    maps = store.maps(settings.grid_variant, task, examples=[example_id])[example_id]  # [L,H,n,n]
    grid = grid_table(maps, infos[example_id].tokens)

    metrics = headline_metrics(cosine, received, cls)
    metrics["examples"] = len(examples)
    log.info("%s: most changed layer %s", task, metrics["cosine.most_changed_layer"])
    return TaskAnalysis(
        task=task,
        examples=examples,
        cosine=numbered_from_one(cosine),
        token_types=numbered_from_one(received),
        cls_last_layer=numbered_from_one(cls),
        grid_variant=settings.grid_variant,
        grid_example=example_id,
        grid_tokens=infos[example_id].tokens,
        grid=numbered_from_one(grid),
        metrics=metrics,
    )


def headline_metrics(
    cosine: pd.DataFrame, received: pd.DataFrame, cls: pd.DataFrame
) -> dict[str, float | int | str]:
    """Flat metrics of the 0-based tables: mean cosine overall and per layer (`cosine.L1`),
    the most changed layer, and per table, variant and special token the top head
    (`received.pretrained.cls.top_head` = "L3-H5") and its score."""
    by_layer = cosine.groupby("layer")["cosine"].mean()
    metrics: dict[str, float | int | str] = {
        "cosine.mean": float(cosine["cosine"].mean()),
        "cosine.most_changed_layer": layer_name(by_layer.idxmin()),
        **{f"cosine.{layer_name(layer)}": float(value) for layer, value in by_layer.items()},
    }
    for name, table in (("received", received), ("cls_last_layer", cls)):
        for (variant, kind), part in table.groupby(["variant", "type"], sort=False):
            if kind not in SPECIAL_TYPES:
                continue
            best = part.loc[part["score"].idxmax()]
            key = f"{name}.{variant}.{kind.strip('[]').lower()}"
            metrics[f"{key}.top_score"] = float(best["score"])
            metrics[f"{key}.top_head"] = head_name(best["layer"], best["head"])
    return metrics
