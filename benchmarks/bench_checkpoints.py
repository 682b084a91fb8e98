"""What resumable checkpoints cost fine-tuning: the share of a training run spent saving them.

    python -m benchmarks.bench_checkpoints [--model minilm_l6] [--task rte] [--rows 400]
        [--every 25] [--threads 2]

Trains `--model` (a name of conf/model/*.yaml) on the first `--rows` rows of `--task`'s
train split in the offline glue_data, with the quick profile's `finetune` settings and a
checkpoint every `--every` steps (the quick profile's `finetune.checkpoint_every`), and
prints the run's wall time, the time spent in `Checkpoints.save` and its share.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch
from omegaconf import OmegaConf

from pipeline.analyses.finetune.settings import FinetuneConfig
from pipeline.core.schema import load_model, load_task
from pipeline.data import sources
from pipeline.data.glue import read_local_split
from pipeline.models.checkpoints import Checkpoints
from pipeline.models.labelled import labelled_rows
from pipeline.models.loading import load_classifier, load_tokenizer
from pipeline.models.training import train
from tools.params import compose_params


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="minilm_l6")
    parser.add_argument("--task", default="rte")
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--every", type=int, default=25)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    cfg = OmegaConf.create(compose_params([]))
    settings = OmegaConf.to_object(
        OmegaConf.merge(OmegaConf.structured(FinetuneConfig), cfg.finetune)
    )
    settings.checkpoint_every = args.every
    task, model_settings = load_task(args.task), load_model(args.model)
    tokenizer = load_tokenizer(model_settings)
    frame, _ = read_local_split(
        sources.glue(cfg.paths.shared_data, cfg.paths.glue_dir, cfg.prepare, [args.task]).folder,
        task,
        "train",
    )
    rows = labelled_rows(tokenizer, task, frame.head(args.rows), cfg.shared.max_length, task.name)
    model = load_classifier(model_settings, tokenizer, task.num_labels, seed=cfg.seed)
    saving, real_save = [], Checkpoints.save

    def timed_save(self: Checkpoints, state: dict) -> None:
        started = time.perf_counter()
        real_save(self, state)
        saving.append(time.perf_counter() - started)

    Checkpoints.save = timed_save  # type: ignore[method-assign]
    checkpoints = Checkpoints(Path(tempfile.mkdtemp()), args.every, "benchmark")
    started = time.perf_counter()
    curve = train(
        model, task, rows.rows, rows.labels, settings, cfg.seed, tokenizer.pad_token_id,
        torch.device("cpu"), checkpoints=checkpoints,
    )  # fmt: skip
    total = time.perf_counter() - started
    print(
        f"{args.model} on {len(rows)} {task.name} rows: {curve[-1][0]} steps in {total:.1f} s; "
        f"{len(saving)} checkpoints (every {args.every} steps and after the last) took "
        f"{sum(saving):.2f} s, {sum(saving) / total:.2%} of the run"
    )


if __name__ == "__main__":
    main()
