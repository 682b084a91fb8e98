"""dump_attention: every attention map of the pre-trained and fine-tuned model on one task.

Runs once per (task, seed) of `tasks` x `seeds`. Writes outputs/attention/<task>/seed<seed>.parquet
(pipeline/attention/store.py describes the layout) with the variants `pretrained` (the
pre-trained encoder) and `finetuned` (outputs/models/<task>/seed<seed>/), on a sample
(stratified by label, seeded by the primary `seed`: the same rows for every fine-tuning seed)
of `dump_attention.num_examples` rows of the task's eval split, and a small metrics file
outputs/metrics/dump_attention/<task>/seed<seed>.json.
"""

from __future__ import annotations

from omegaconf import OmegaConf

from pipeline.attention.dump_attention import dump_task
from pipeline.attention.store import store_path
from pipeline.attention.store_writer import config_hash
from pipeline.core.precision import autocast
from pipeline.core.stage import StageRun, stage_main
from pipeline.data.glue import read_split
from pipeline.models.loading import load_encoder, load_finetuned, load_tokenizer


def run(stage: StageRun) -> None:
    cfg, task = stage.cfg, stage.task
    model = stage.settings("model")
    tokenizer = load_tokenizer(model)
    models = {
        "finetuned": load_finetuned(stage.model_folder, stage.device),
        "pretrained": load_encoder(model, tokenizer, seed=cfg.seed).to(stage.device),
    }
    with autocast(cfg.precision, stage.device):  # fp32 on CPU (README, Precision)
        metrics = dump_task(
            models,
            tokenizer,
            task,
            read_split(stage.data(), task.name, task.eval_split),
            store_path(stage.inputs_out("dump_attention") / "attention", task.name, stage.seed),
            stage.settings("dump_attention"),
            max_length=cfg.shared.max_length,
            model_id=cfg.model.name,
            config_hash=config_hash(
                OmegaConf.to_container(cfg.model, resolve=True),
                OmegaConf.to_container(cfg.dump_attention, resolve=True),
                cfg.shared.max_length,
                task.name,
            ),
            seed=cfg.seed,
            compile_settings=stage.settings("compile"),
        )
    stage.write_outputs("dump_attention", task.name, stage.seed_folder, metrics=metrics)


if __name__ == "__main__":
    stage_main(run)
