"""Benchmark of the attention dump and store on the quick profile's model and real dev data.

    python -m benchmarks.bench_dump [--examples 200] [--tasks sst2 mrpc] [--threads 1] [--repeat 2]

Prints, for MiniLM-L6 (6 x 12 heads) on the first N dev examples of each task:
1. dump throughput (examples/s): engine capture + Parquet store, against the naive way
   (eager attention with output_attentions for all layers, np.save of float32 maps per example);
2. store bytes / raw float16 bytes of the same cropped maps (goal <= 0.85, lossless);
3. 8-bit store bytes / raw float16 bytes (goal <= 0.55) and its largest error as a fraction
   of the row maximum (goal <= 1/255);
4. time to read one head's maps over all examples / time to read the whole store (goal <= 0.1).
Dev data come from data/glue/ when the prepare stage has run, else from ../shared/data.
"""

from __future__ import annotations

import argparse
import copy
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from omegaconf import OmegaConf

from pipeline.attention.dump_attention import Example, dump_variant, tokenize_examples
from pipeline.attention.engine import attach, model_shape
from pipeline.attention.store import AttentionStore
from pipeline.attention.store_writer import AttentionWriter
from pipeline.core.config import CONF_DIR, glue_dir
from pipeline.core.schema import load_model, load_task
from pipeline.data.batching import length_batches
from pipeline.data.encoding import collate
from pipeline.data.glue import read_local_split, read_split
from pipeline.models.loading import load_encoder, load_tokenizer

REPO = Path(__file__).resolve().parent.parent
MAX_LENGTH = 128
BATCH_SIZE = 16


def dev_frame(task: str, rows: int) -> pd.DataFrame:
    spec = load_task(task)
    prepared = REPO / "data" / "glue" / task / f"{spec.eval_split}.parquet"
    if prepared.exists():
        frame = read_split(REPO / "data", task, spec.eval_split)
    else:
        paths = OmegaConf.load(CONF_DIR / "paths" / "default.yaml")
        paths.shared_data = str((REPO / paths.shared_data).resolve())
        frame, _ = read_local_split(
            glue_dir(OmegaConf.create({"paths": paths})), spec, "validation"
        )
    return frame.head(rows)


def dump_store(model, examples: list[Example], task: str, path: Path, pad_id: int, quantize: str):
    layers, heads = model_shape(model)
    settings = dict(model_id="minilm_l6", num_layers=layers, num_heads=heads, config_hash="bench")
    with AttentionWriter(path, **settings, quantize=quantize) as writer:
        dump_variant(
            model, examples, writer, "pretrained", task,
            batch_size=BATCH_SIZE, pad_id=pad_id,
        )  # fmt: skip


@torch.no_grad()
def dump_naive(eager, examples: list[Example], folder: Path, pad_id: int) -> None:
    """The baseline: eager attention for all layers, one float32 .npy file per example."""
    folder.mkdir(parents=True, exist_ok=True)
    for chosen in length_batches([len(e.row["input_ids"]) for e in examples], BATCH_SIZE):
        batch = [examples[i] for i in chosen]
        attentions = eager(
            **collate([e.row for e in batch], pad_id), output_attentions=True
        ).attentions
        stacked = torch.stack(attentions, dim=1)  # [B, L, H, T, T]
        for i, example in enumerate(batch):
            n = len(example.tokens)
            np.save(folder / f"{example.example_id}.npy", stacked[i, :, :, :n, :n].numpy())


def timed(fn, repeat: int = 1) -> float:
    """The best wall time of `repeat` calls (the machine may be shared: best of N)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200, help="dev examples per task")
    parser.add_argument("--tasks", nargs="+", default=["sst2", "mrpc"])
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--repeat", type=int, default=2, help="best of N runs of each dump")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    model_cfg = load_model("minilm_l6")
    tokenizer = load_tokenizer(model_cfg)
    pad_id = tokenizer.pad_token_id
    encoder = load_encoder(model_cfg, tokenizer).eval()
    eager = copy.deepcopy(encoder)
    eager.set_attn_implementation("eager")
    engine = attach(encoder)
    layers, heads = model_shape(engine)
    with torch.no_grad():  # warm-up: the first forward passes pay one-off costs
        for model in (engine, eager):
            model(input_ids=torch.ones(BATCH_SIZE, MAX_LENGTH, dtype=torch.long))

    totals = dict.fromkeys(
        ["examples", "raw16", "store", "store8", "naive_bytes", "t_store", "t_store8",
         "t_naive", "t_all", "t_head", "t_head_naive", "max_err16", "max_err8_rel"], 0.0
    )  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for task in args.tasks:
            frame = dev_frame(task, args.examples)
            examples = tokenize_examples(tokenizer, load_task(task), frame, MAX_LENGTH)
            lengths = np.array([len(e.tokens) for e in examples])
            store16, store8, naive = (
                root / f"{task}.parquet",
                root / f"{task}.u8.parquet",
                root / task,
            )
            totals["t_store"] += timed(
                partial(dump_store, engine, examples, task, store16, pad_id, "none"), args.repeat
            )
            totals["t_store8"] += timed(
                partial(dump_store, engine, examples, task, store8, pad_id, "uint8"), args.repeat
            )
            totals["t_naive"] += timed(
                partial(dump_naive, eager, examples, naive, pad_id), args.repeat
            )
            totals["examples"] += len(examples)
            totals["raw16"] += layers * heads * float((lengths**2).sum()) * 2
            totals["store"] += store16.stat().st_size
            totals["store8"] += store8.stat().st_size
            totals["naive_bytes"] += sum(p.stat().st_size for p in naive.iterdir())

            exact = {e.example_id: np.load(naive / f"{e.example_id}.npy") for e in examples}
            for path, key in ((store16, "max_err16"), (store8, "max_err8_rel")):
                for example_id, maps in AttentionStore(path).maps("pretrained", task).items():
                    error = np.abs(maps - exact[example_id]).max(-1)  # [L, H, n]
                    if key == "max_err8_rel":
                        error = error / exact[example_id].max(-1)
                    totals[key] = max(totals[key], float(error.max()))

            def read_all(path=store16, task=task):
                return AttentionStore(path).maps("pretrained", task)

            def read_head(path=store16, task=task):
                return AttentionStore(path).maps("pretrained", task, layers=[3], heads=[5])

            def read_head_naive(folder=naive):
                return {p.stem: np.load(p)[3, 5] for p in folder.iterdir()}

            totals["t_all"] += timed(read_all, repeat=5)
            totals["t_head"] += timed(read_head, repeat=5)
            totals["t_head_naive"] += timed(read_head_naive, repeat=5)

    t = totals
    n = int(t["examples"])
    print(f"\nMiniLM-L6 ({layers} x {heads} heads), {n} dev examples of {', '.join(args.tasks)}, "
          f"max length {MAX_LENGTH}, batch {BATCH_SIZE}, {args.threads} CPU thread(s)")  # fmt: skip
    rows = [
        ("dump throughput, store float16 (ex/s)", n / t["t_store"], None),
        ("dump throughput, store uint8 (ex/s)", n / t["t_store8"], None),
        ("dump throughput, naive eager + np.save f32 (ex/s)", n / t["t_naive"], None),
        ("speed-up of the store dump over naive (x)", t["t_naive"] / t["t_store"], None),
        ("raw float16 cropped maps (MiB)", t["raw16"] / 2**20, None),
        ("naive .npy float32 files (MiB)", t["naive_bytes"] / 2**20, None),
        ("store float16 bytes / raw float16", t["store"] / t["raw16"], "<= 0.85"),
        ("store float16 max abs error vs float32", t["max_err16"], "float16 rounding"),
        ("store uint8 bytes / raw float16", t["store8"] / t["raw16"], "<= 0.55"),
        ("store uint8 max error / row max (x 255)", t["max_err8_rel"] * 255, "<= 1"),
        ("read whole store (s)", t["t_all"], None),
        ("read one head, all examples (s)", t["t_head"], None),
        ("read one head / read whole store", t["t_head"] / t["t_all"], "<= 0.1"),
        ("naive: read one head from .npy files (s)", t["t_head_naive"], None),
    ]
    for name, value, goal in rows:
        print(f"  {name:<52} {value:10.4f}   {goal or ''}")


if __name__ == "__main__":
    main()
