"""Benchmark of the head/layer ablation sweep on the quick profile's model and real dev data.

    python -m benchmarks.bench_ablate [--task rte] [--examples 32] [--max-length 64]
                                      [--mode uniform] [--threads 1] [--repeat 1]

On MiniLM-L6 (6 x 12 heads) and the first N dev examples of a task (read from
../shared/data/glue_data, the real GLUE dev file), it runs the full Fig. 8 + Fig. 9 sweep
(72 single heads + 6 layers) twice:
- fast: `pipeline.ablation.sweep.sweep` (cached layer inputs, only the layers at and above the
  ablated one, SDPA, stacked ablations);
- naive: `tests.support.oracles.naive_ablation.naive_sweep` (a full eager forward pass per
  ablation, heads disabled by rewriting their context vectors with hooks);
and prints both times (CPU seconds of this process, and wall seconds), their ratio (goal
>= 2 on CPU), the largest |logit difference| between the two (goal <= 1e-4) and whether
every prediction agrees. It then prints the forward time of a model whose least important
half of the heads (gradient importance) are sliced out of the weights, against the full
model. The model is the fine-tuned one in outputs/models/<task>/seed<seed> when present, else
the pre-trained encoder with a freshly initialised (seeded) classification head.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from omegaconf import OmegaConf

from pipeline.ablation.importance import head_importance, least_important, normalise_per_layer
from pipeline.ablation.sweep import head_ablations, layer_ablations, sweep
from pipeline.attention.engine import HeadControl, attach, model_shape
from pipeline.attention.layerwise import Layerwise
from pipeline.core.config import CONF_DIR, glue_dir
from pipeline.core.run_config import primary_model
from pipeline.core.schema import load_model, load_task
from pipeline.data.encoding import collate, encode
from pipeline.data.glue import read_local_split
from pipeline.models.loading import load_classifier, load_finetuned, load_tokenizer
from tests.support.oracles.naive_ablation import naive_sweep
from tests.support.oracles.slicing import slice_heads

REPO = Path(__file__).resolve().parent.parent


def timed(run: Callable[[], object], repeat: int) -> tuple[float, float, object]:
    """(best CPU seconds, best wall seconds, last result) over `repeat` runs."""
    cpu, wall, result = [], [], None
    for _ in range(repeat):
        started_cpu, started_wall = time.process_time(), time.perf_counter()
        result = run()
        cpu.append(time.process_time() - started_cpu)
        wall.append(time.perf_counter() - started_wall)
    return min(cpu), min(wall), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="rte")
    parser.add_argument("--examples", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=64)  # the quick profile's
    parser.add_argument("--mode", default="uniform", choices=["uniform", "zero"])
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    task = load_task(args.task)
    model_cfg = load_model("minilm_l6")
    tokenizer = load_tokenizer(model_cfg)
    finetuned = primary_model(REPO, task.name)
    if (finetuned / "config.json").exists():
        model, source = load_finetuned(finetuned), f"fine-tuned ({finetuned})"
    else:
        model, source = load_classifier(model_cfg, tokenizer, task.num_labels, seed=0), "fresh head"
    layerwise = Layerwise.of(attach(model))
    shape = model_shape(model)

    paths = OmegaConf.load(CONF_DIR / "paths" / "default.yaml")
    paths.shared_data = str((REPO / paths.shared_data).resolve())
    frame, _ = read_local_split(glue_dir(OmegaConf.create({"paths": paths})), task, "validation")
    frame = frame.head(args.examples)
    rows = encode(tokenizer, task, frame, args.max_length)
    ablations = head_ablations(shape) + layer_ablations(shape)
    tokens = sum(len(r["input_ids"]) for r in rows)
    print(
        f"model minilm_l6 {shape[0]}x{shape[1]} ({source}); {task.name} dev: {len(rows)} "
        f"examples, {tokens} tokens (max length {args.max_length}); {len(ablations)} ablations, "
        f"mode {args.mode}; {args.threads} thread(s)"
    )

    settings = dict(mode=args.mode, pad_id=tokenizer.pad_token_id, batch_size=args.batch_size)
    fast_cpu, fast_wall, fast = timed(
        lambda: sweep(layerwise, rows, ablations, progress=False, **settings), args.repeat
    )
    masks = [a.mask(shape) for a in ablations]
    naive_cpu, naive_wall, (naive_base, naive_logits) = timed(
        lambda: naive_sweep(model, rows, masks, progress=False, **settings), args.repeat
    )
    gap = max(
        float(np.abs(fast.logits - naive_logits).max()),
        float(np.abs(fast.baseline - naive_base).max()),
    )
    same = bool((fast.logits.argmax(-1) == naive_logits.argmax(-1)).all())
    print(f"fast sweep : {fast_cpu:7.1f} s CPU  {fast_wall:7.1f} s wall")
    print(f"naive sweep: {naive_cpu:7.1f} s CPU  {naive_wall:7.1f} s wall")
    ratio_cpu, ratio_wall = naive_cpu / fast_cpu, naive_wall / fast_wall
    print(f"speed-up   : {ratio_cpu:.2f}x (CPU time), {ratio_wall:.2f}x (wall)")
    print(f"max |delta logit| fast vs naive: {gap:.2e}  (goal <= 1e-4: {gap <= 1e-4})")
    print(f"predictions identical: {same}")

    labels = frame["label"].to_numpy()
    scores = head_importance(layerwise, rows, labels, task, pad_id=tokenizer.pad_token_id).scores
    half = least_important(normalise_per_layer(scores), np.zeros(shape, bool), scores.size // 2)
    sliced = slice_heads(model, torch.from_numpy(half))
    sliced.set_attn_implementation("sdpa")
    batch = collate(rows, tokenizer.pad_token_id)
    with torch.no_grad():
        full_cpu, _, _ = timed(lambda: model(**batch), 3)
        cut_cpu, _, cut_logits = timed(lambda: sliced(**batch).logits, 3)
        zero = HeadControl(disabled=torch.from_numpy(half), mode="zero")
        gated = model(**batch, head_control=zero).logits
    print(
        f"forward with 50% of heads sliced out of the weights: {cut_cpu:.3f} s vs {full_cpu:.3f} s "
        f"full ({full_cpu / cut_cpu:.2f}x); max |logit - zero-gated model| "
        f"{float((cut_logits - gated).abs().max()):.1e}"
    )


if __name__ == "__main__":
    main()
