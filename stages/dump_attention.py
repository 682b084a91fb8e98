"""dump_attention: every attention map of the pre-trained and fine-tuned model on one task.

Writes outputs/attention/<task>.parquet (pipeline/store.py describes the layout) with the
variants `pretrained` (the pre-trained encoder) and `finetuned` (outputs/models/<task>/), on
the first `dump.num_examples` rows of the task's eval split, and a small metrics file
outputs/metrics/dump_attention/<task>.json.
"""

from __future__ import annotations

import logging
import time

import numpy as np
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from pipeline.attention.dump import dump_variant, tokenize_examples
from pipeline.attention.engine import attach, model_shape
from pipeline.attention.store import AttentionWriter, config_hash
from pipeline.core.config import TaskSpec
from pipeline.core.errors import PipelineError
from pipeline.core.io import write_json
from pipeline.core.stage import StageRun, stage_main
from pipeline.data.glue import read_split
from pipeline.models.loading import load_encoder, load_finetuned, load_tokenizer, pick_device

log = logging.getLogger(__name__)

VARIANTS = ("finetuned", "pretrained")  # sorted: the store's row order


def load_variant(
    stage: StageRun, variant: str, tokenizer: PreTrainedTokenizerBase
) -> PreTrainedModel:
    """The pre-trained encoder or the task's fine-tuned classifier, attached to the engine."""
    if variant == "finetuned":
        model = load_finetuned(stage.upstream("models", stage.cfg.task.name))
    else:
        model = load_encoder(stage.cfg.model, tokenizer, seed=stage.cfg.seed)
    return attach(model.to(pick_device(stage.cfg.device)).eval())


def run(stage: StageRun) -> None:
    cfg, settings = stage.cfg, stage.cfg.dump_attention
    task = TaskSpec.from_config(cfg.task)
    tokenizer = load_tokenizer(cfg.model)
    frame = read_split(stage.data(), task.name, task.eval_split).head(settings.num_examples)
    examples = tokenize_examples(tokenizer, task, frame, cfg.shared.max_length)
    models = {variant: load_variant(stage, variant, tokenizer) for variant in VARIANTS}
    shapes = {variant: model_shape(model) for variant, model in models.items()}
    if len(set(shapes.values())) > 1:
        raise PipelineError(f"the {task.name} models differ in shape {shapes}; re-run finetune")
    num_layers, num_heads = shapes["pretrained"]

    path = stage.out("attention", f"{task.name}.parquet")
    started = time.perf_counter()
    with AttentionWriter(
        path,
        model_id=cfg.model.name,
        num_layers=num_layers,
        num_heads=num_heads,
        config_hash=config_hash(cfg.model, settings, cfg.shared.max_length, task.name),
        quantize=settings.quantize,
        row_group_bytes=int(settings.row_group_mib * 2**20),
    ) as writer:
        for variant, model in models.items():
            dump_variant(
                model,
                examples,
                writer,
                variant,
                task.name,
                batch_size=settings.batch_size,
                pad_id=tokenizer.pad_token_id,
            )
    seconds = time.perf_counter() - started
    lengths = np.array([len(e.tokens) for e in examples])
    raw_bytes = len(VARIANTS) * num_layers * num_heads * int((lengths**2).sum()) * 2
    write_json(
        stage.out("metrics", "dump_attention", f"{task.name}.json"),
        {
            "examples": len(examples),
            "mean_tokens": round(float(lengths.mean()), 2),
            "file_mib": round(path.stat().st_size / 2**20, 3),
            "bytes_vs_raw_float16": round(path.stat().st_size / raw_bytes, 4),
            "seconds": round(seconds, 1),
        },
    )
    log.info(
        "%s: %d examples x %d variants in %.1f s -> %s",
        task.name,
        len(examples),
        len(VARIANTS),
        seconds,
        path,
    )


if __name__ == "__main__":
    stage_main(run)
