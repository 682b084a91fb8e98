"""clark_coref: the coreference head on GAP (Clark et al. 2019, Sec. 4.3).

Streams the pre-trained model's attention over `clark.coref.select_examples` GAP
development texts and `clark.coref.report_examples` validation texts, scores every head by
how often the pronoun attends most to its antecedent rather than the other name, chooses
the best head on development and reports it on validation against the nearest-name
baseline. Writes outputs/plots/clark_coref/heads.csv (every head, both splits),
outputs/figures/clark_coref/heads.png and outputs/metrics/clark_coref/gap.json.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
from omegaconf import DictConfig
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pipeline.clark import figures
from pipeline.clark.coref import (
    GapExample,
    encode_gap,
    head_accuracy,
    name_scores,
    nearest_candidate,
    read_gap,
)
from pipeline.clark.stream import stream_maps
from pipeline.core.config import shared_data_dir
from pipeline.core.heads import head_name
from pipeline.core.io import save_figure, write_json, write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.data.sampling import seeded_subset
from pipeline.models.loading import load_attached_encoder

log = logging.getLogger(__name__)


def load_split(cfg: DictConfig, split: str, limit: int | None) -> list[GapExample]:
    folder = Path(cfg.clark_coref.dir or shared_data_dir(cfg) / "gap_coreference")
    examples = read_gap(folder / f"gap-{split}.tsv")
    return [examples[i] for i in seeded_subset(len(examples), limit, cfg.seed)]


def score_heads(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    examples: list[GapExample],
    settings: DictConfig,
    split: str,
) -> tuple[np.ndarray, float, int]:
    """(per-head accuracy [L, H], nearest-name accuracy, examples used) on one split."""
    encoded = [encode_gap(tokenizer, e, settings.max_length) for e in examples]
    kept = [i for i, item in enumerate(encoded) if item is not None]
    scores = {}
    stream = stream_maps(
        model,
        [encoded[i].encoding for i in kept],
        settings.batch_size,
        tokenizer.pad_token_id,
        f"GAP {split}",
    )
    for position, maps in stream:
        scores[position] = name_scores(maps, encoded[kept[position]])  # [2, L, H]
    answers = [examples[i].answer for i in kept]
    accuracy = head_accuracy([scores[p] for p in range(len(kept))], answers)
    nearest = float(np.mean([nearest_candidate(examples[i]) == examples[i].answer for i in kept]))
    log.info(
        "GAP %s: %d of %d examples fit in %d pieces",
        split,
        len(kept),
        len(examples),
        settings.max_length,
    )
    return accuracy, nearest, len(kept)


def run(stage: StageRun) -> None:
    cfg, settings = stage.cfg, stage.cfg.clark_coref
    model, tokenizer = load_attached_encoder(cfg)
    select, _, n_select = score_heads(
        model,
        tokenizer,
        load_split(cfg, "development", settings.select_examples),
        settings,
        "development",
    )
    report, nearest, n_report = score_heads(
        model,
        tokenizer,
        load_split(cfg, "validation", settings.report_examples),
        settings,
        "validation",
    )
    layer, head = np.unravel_index(select.argmax(), select.shape)
    layers, heads = np.indices(select.shape).reshape(2, -1)
    table = pd.DataFrame(
        {
            "layer": layers,
            "head": heads,
            "select_accuracy": select.reshape(-1),
            "report_accuracy": report.reshape(-1),
        }
    )
    write_table(stage.out("plots", "clark_coref", "heads.csv"), table)
    save_figure(
        stage.out("figures", "clark_coref", "heads.png"),
        figures.coref_heads(table, nearest),
        f"Share of GAP validation pronouns ({n_report}) whose {cfg.model.name} head attends more "
        f"to the correct name than to the other; the head reported is chosen on {n_select} "
        f"development examples.",
        {"select_examples": settings.select_examples, "report_examples": settings.report_examples},
    )
    metrics = {
        "best_head": head_name(layer, head),
        "head_accuracy": float(report[layer, head]),
        "head_select_accuracy": float(select[layer, head]),
        "nearest_baseline_accuracy": nearest,
        "best_report_head_accuracy": float(report.max()),
        "select_examples": n_select,
        "report_examples": n_report,
    }
    write_json(stage.out("metrics", "clark_coref", "gap.json"), metrics)
    log.info("clark_coref: %s", metrics)


if __name__ == "__main__":
    stage_main(run)
