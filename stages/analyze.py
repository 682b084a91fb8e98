"""analyze: Kovaleva et al. Figs. 5, 6, 7 and 10 for one task, from its attention store.

Reads outputs/attention/<task>.parquet (pre-trained and fine-tuned maps of the same dev
examples) and writes, under outputs/plots/analyze/<task>/ and outputs/figures/analyze/<task>/:
- cosine.csv, fig5_cosine.png: per-head cosine similarity, pre-trained vs fine-tuned;
- token_types.csv, fig6_token_types_<variant>.png: attention received by each token type;
- cls_last_layer.csv, fig7_cls_last_layer.png: the last layer's [CLS] row per token type;
- grid_example.csv, fig10_grid.png: every head's map of one example;
and the headline numbers to outputs/metrics/analyze/<task>.json.
"""

from __future__ import annotations

import logging

import pandas as pd
from omegaconf import OmegaConf

from pipeline.attention.store import AttentionStore
from pipeline.core.config import TaskSpec
from pipeline.core.io import save_figure, write_json, write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.kovaleva.linguistic import SPECIAL_TYPES, example_type_masks, load_spacy, parse_rules
from pipeline.kovaleva.tables import (
    VARIANTS,
    cosine_table,
    grid_example,
    grid_table,
    shared_examples,
    token_type_tables,
    top_head,
)
from pipeline.report.figures import attention_grid, head_heatmaps

log = logging.getLogger(__name__)


def headline(cosine: pd.DataFrame, received: pd.DataFrame, cls: pd.DataFrame) -> dict:
    """Flat metrics: mean cosine per layer, the most changed layer, the top special heads."""
    by_layer = cosine.groupby("layer")["cosine"].mean()
    metrics: dict[str, float | int] = {
        "cosine.mean": float(cosine["cosine"].mean()),
        "cosine.most_changed_layer": int(by_layer.idxmin()),
        **{f"cosine.layer_{layer}": float(value) for layer, value in by_layer.items()},
    }
    for name, table in (("received", received), ("cls_last_layer", cls)):
        for (variant, kind), part in table.groupby(["variant", "type"], sort=False):
            if kind not in SPECIAL_TYPES:
                continue
            best = top_head(part, "score")
            key = f"{name}.{variant}.{kind.strip('[]').lower()}"
            metrics[f"{key}.top_score"] = float(best["score"])
            metrics[f"{key}.top_layer"] = int(best["layer"])
            metrics[f"{key}.top_head"] = int(best["head"])
    return metrics


def run(stage: StageRun) -> None:
    cfg, settings = stage.cfg, stage.cfg.analyze
    task = TaskSpec.from_config(cfg.task).name
    store = AttentionStore(
        stage.upstream("attention", f"{task}.parquet"), expect_model=cfg.model.name
    )
    examples = shared_examples(store, task, settings.num_examples)
    config = {
        "task": task,
        "model": cfg.model.name,
        "examples": len(examples),
        "store": str(stage.upstream("attention", f"{task}.parquet")),
    }
    plots, figures = stage.out("plots", "analyze", task), stage.out("figures", "analyze", task)

    cosine = cosine_table(store, task, examples, settings.chunk_examples)
    write_table(plots / "cosine.csv", cosine)
    save_figure(
        figures / "fig5_cosine.png",
        head_heatmaps(
            cosine, "cosine", annotate=True, title=f"{task}: cosine(pre-trained, fine-tuned)"
        ),
        f"Fig. 5 ({task}): per-head cosine similarity between the pre-trained and the fine-tuned "
        "attention map of the same dev example (flattened real-length maps), averaged over "
        f"{len(examples)} examples. Low values: heads that fine-tuning changed most.",
        config,
    )

    rules = parse_rules(OmegaConf.to_container(settings.token_types, resolve=True))
    type_names = [*SPECIAL_TYPES, *rules]
    infos = {e: store.tokens(task, e) for e in examples}
    log.info("%s: tagging %d examples with spaCy %s", task, len(infos), settings.spacy_model)
    masks = example_type_masks(infos, load_spacy(settings.spacy_model), rules)
    received, cls = token_type_tables(
        store, task, examples, masks, type_names, settings.chunk_examples
    )
    write_table(plots / "token_types.csv", received)
    write_table(plots / "cls_last_layer.csv", cls)
    present = [t for t in type_names if t in set(received["type"])]
    for variant in VARIANTS:
        part = received[received["variant"] == variant]
        save_figure(
            figures / f"fig6_token_types_{variant}.png",
            head_heatmaps(part, "score", facet="type", facets=present, title=f"{task} ({variant})"),
            f"Fig. 6 ({task}, {variant} model): per head, the attention a token type receives "
            "(mean over query positions, max over the type's tokens in the example), averaged "
            "over the examples that hold the type; examples without it are left out.",
            config,
        )
    save_figure(
        figures / "fig7_cls_last_layer.png",
        head_heatmaps(
            cls,
            "score",
            facet="variant",
            facets=list(VARIANTS),
            rows="type",
            cols="head",
            ncols=2,
            annotate=True,
            title=f"{task}: last layer's [CLS] attention to token types",
        ),
        f"Fig. 7 ({task}): attention from [CLS] in the last layer to each token type (max over "
        "the type's tokens), per head, averaged over the examples that hold the type.",
        config,
    )

    grid = settings.grid
    example_id, info = grid_example(store, task, examples, grid.max_tokens)
    maps = store.maps(grid.variant, task, examples=[example_id])[example_id]  # [L, H, n, n]
    cells = grid_table(maps, info.tokens)
    write_table(plots / "grid_example.csv", cells)
    text = " ".join(info.tokens)
    save_figure(
        figures / "fig10_grid.png",
        attention_grid(cells, title=f"{task} ({grid.variant}), example {example_id}: {text}"),
        f"Fig. 10 ({task}): every head's attention map (rows: layers, columns: heads) of dev "
        f"example {example_id} ({len(info)} pieces) in the {grid.variant} model.",
        {**config, "example_id": example_id, "variant": grid.variant},
    )

    metrics = headline(cosine, received, cls)
    metrics["examples"] = len(examples)
    write_json(stage.out("metrics", "analyze", f"{task}.json"), metrics)
    log.info("%s: most changed layer %d", task, metrics["cosine.most_changed_layer"])


if __name__ == "__main__":
    stage_main(run)
