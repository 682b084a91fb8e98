"""Cost of a profile (default: paper): each stage's per-example cost on a model of the
profile's shape, measured on this machine, projected to conf/experiment/<profile>.yaml.

    python -m benchmarks.bench_cost [--profile paper] [--threads 2] [--precision fp32]
        [--train-batch 32] [--train-steps 1] [--dump-examples 16] [--sweep-examples 2]
        [--importance-examples 4] [--length 128] [--json PATH]

The model is a BertConfig of the profile's model's shapes (its config.json where the model is
on disk, e.g. MiniLM-L6: 6 layers x 12 heads, hidden 384; else a BertConfig's defaults,
bert-base's shapes) with random weights; every input is `--length` word pieces (real RTE
dev sentences repeated and truncated), the paper's maximum length, so the projection is an
upper bound: real GLUE examples are shorter (padding is dynamic). Each stage runs in a
fresh process, the project's own functions doing the work, and reports its time, its
examples and its peak resident memory:

- finetune: `pipeline.models.training.train` (one warm-up step, then `--train-steps` timed
  steps of `--train-batch` examples) and a no-grad forward for evaluation;
- dump: `pipeline.attention.dump_attention.dump_variant` into a real store (capture +
  Parquet write), whose bytes per example are measured;
- ablate: the sweep of every head and layer (`pipeline.ablation.sweep.sweep`), gradient
  importance (`head_importance`) and the gated forward of the pruning curve (`gated_logits`);
- analyze: `pipeline.kovaleva.analyze.analyze_task` on the dumped store (spaCy included).

The fine-tuning and ablation processes first measure the float32 matmul rate (best of 2048 x
2048 torch.mm) and state fine-tuning and the sweep as a fraction of it (both in the same
process, seconds apart, so a machine shared with other jobs skews both alike). FLOPs come
from the model's shapes: per layer and example 8TD^2 (Q, K, V, O) + 4TDI (feed-forward) +
4T^2D (scores and context); training counts 3x the forward; the sweep counts every layer it
runs (cached layer inputs: an ablation at layer l runs layers l..L-1). The projection
multiplies per-example costs by the profile's counts (its GLUE tasks at their real sizes,
capped by `prepare`'s row limits, times its fine-tuning seeds; the `finetune`,
`dump_attention`, `ablate` and `analyze` settings of experiment=<profile>).
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import pandas as pd
import torch
from omegaconf import OmegaConf

from pipeline.ablation.importance import pruning_schedule
from pipeline.core.config import glue_dir
from pipeline.core.params import compose_params
from pipeline.core.schema import load_model, load_task

REPO = Path(__file__).resolve().parent.parent
TASK = "rte"  # source of the benchmark's sentences (two text columns, offline)

# GLUE train / dev sizes (MNLI: matched dev), from the GLUE paper and the hub's nyu-mll/glue.
GLUE_SIZES = {
    "cola": (8551, 1043),
    "sst2": (67349, 872),
    "mrpc": (3668, 408),
    "stsb": (5749, 1500),
    "qqp": (363846, 40430),
    "mnli": (392702, 9815),
    "qnli": (104743, 5463),
    "rte": (2490, 277),
    "wnli": (635, 71),
}


def profile_params(profile: str) -> dict[str, Any]:
    """The composed config of experiment=<profile> (what params.yaml would hold)."""
    return OmegaConf.to_container(OmegaConf.create(compose_params([f"experiment={profile}"])))


def glue_folder() -> Path:
    """The classic glue_data folder the config names (paths.*, relative to the repository;
    $DARK_SECRETS_DATA and $GLUE_DIR override it)."""
    paths = profile_params("quick")["paths"]
    return glue_dir(paths["glue_dir"], str(REPO / paths["shared_data"]))


@dataclass(frozen=True)
class Shape:
    """The transformer shapes FLOPs are counted from."""

    layers: int
    heads: int
    hidden: int
    intermediate: int

    def layer_flops(self, length: int) -> float:
        """Forward FLOPs of one encoder layer on one example of `length` tokens."""
        t, d, i = length, self.hidden, self.intermediate
        return 8 * t * d * d + 4 * t * d * i + 4 * t * t * d

    def forward_flops(self, length: int) -> float:
        return self.layers * self.layer_flops(length) + 2 * self.hidden**2  # + pooler

    def sweep_flops(self, length: int) -> float:
        """FLOPs of one example's sweep: the baseline forward, then each head (H per layer)
        and each layer ablated, running the layers from the ablated one up."""
        layers_run = sum((self.heads + 1) * (self.layers - start) for start in range(self.layers))
        return self.forward_flops(length) + layers_run * self.layer_flops(length)

    @classmethod
    def of_model(cls, model: dict[str, Any]) -> Shape:
        """The shapes of a profile's model: its config.json when the model is on disk (a
        local folder or pkg://), its random_config, else a BertConfig's defaults."""
        from transformers import BertConfig

        from pipeline.models.loading import resolve_location

        values: dict[str, Any] = dict(model.get("random_config") or {})
        if not values and model.get("name_or_path"):
            config = Path(resolve_location(model["name_or_path"])) / "config.json"
            values = json.loads(config.read_text()) if config.exists() else {}
        config = BertConfig(**{k: v for k, v in values.items() if k in BertConfig().to_dict()})
        return cls(
            config.num_hidden_layers,
            config.num_attention_heads,
            config.hidden_size,
            config.intermediate_size,
        )


# --- measurements, each in a fresh process ------------------------------------------------


def _peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # Linux: KiB


def _setup(opts: dict[str, Any]):
    """Threads, the tokenizer and a classifier of the profile's shape with random weights."""
    from transformers import BertConfig, BertForSequenceClassification

    from pipeline.models.loading import load_tokenizer

    torch.set_num_threads(opts["threads"])
    torch.manual_seed(0)
    tokenizer = load_tokenizer(load_model("minilm_l6"))
    shape = Shape(**opts["shape"])
    config = BertConfig(
        vocab_size=len(tokenizer),
        num_labels=2,
        num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads,
        hidden_size=shape.hidden,
        intermediate_size=shape.intermediate,
    )
    model = BertForSequenceClassification(config)
    model.set_attn_implementation("sdpa")
    return tokenizer, model.eval()


def _frame(count: int, length: int) -> pd.DataFrame:
    """`count` RTE dev pairs, the premise repeated until the pair fills `length` pieces."""
    from pipeline.data.glue import read_local_split

    frame, _ = read_local_split(glue_folder(), load_task(TASK), "validation")
    frame = pd.concat([frame] * math.ceil(count / len(frame))).head(count).copy()
    frame["idx"] = range(count)
    frame["sentence1"] = (frame["sentence1"] + " ") * math.ceil(length / 8)
    return frame


def _rows(tokenizer, count: int, length: int):
    from pipeline.models.labelled import labelled_rows

    frame = _frame(count, length)
    return labelled_rows(tokenizer, load_task(TASK), frame, length, "bench")


def measure_finetune(opts: dict[str, Any]) -> dict[str, float]:
    from pipeline.core.schema import FinetuneConfig, typed
    from pipeline.models.training import predict, train

    tokenizer, model = _setup(opts)
    gflops = matmul_gflops()  # the machine's rate now, in this process
    batch = opts["train_batch"]
    data = _rows(tokenizer, batch * (1 + opts["train_steps"]), opts["length"])
    node = OmegaConf.create(profile_params(opts["profile"])["finetune"])
    node.epochs, node.batch_size, node.checkpoint_every = 1, batch, 0
    settings = typed(FinetuneConfig, node)
    task, pad = load_task(TASK), tokenizer.pad_token_id
    run = {"device": torch.device("cpu"), "precision": opts["precision"]}
    train(model, task, data.rows[:batch], data.labels[:batch], settings, 0, pad, **run)  # warm-up
    started = time.perf_counter()
    timed = slice(batch, None)
    train(model, task, data.rows[timed], data.labels[timed], settings, 0, pad, **run)
    seconds = time.perf_counter() - started
    predict(model, data.rows[:batch], batch, pad, **run)  # warm-up
    started = time.perf_counter()
    predict(model, data.rows, batch, pad, **run)
    forward = (time.perf_counter() - started) / len(data.rows)
    return {
        "train_s": seconds / (batch * opts["train_steps"]),
        "matmul_gflops": gflops,
        "forward_s": forward,
        "parameters": sum(p.numel() for p in model.parameters()),
        "peak_gib": _peak_gib(),
    }


def measure_dump(opts: dict[str, Any]) -> dict[str, float]:
    from pipeline.attention.dump_attention import dump_variant, tokenize_examples
    from pipeline.attention.engine import attach, model_shape
    from pipeline.attention.store_writer import AttentionWriter
    from pipeline.core.precision import autocast

    tokenizer, model = _setup(opts)
    model = attach(model)
    count, batch = opts["dump_examples"], opts["dump_batch"]
    frame = _frame(count + batch, opts["length"])
    examples = tokenize_examples(tokenizer, load_task(TASK), frame, opts["length"])
    num_layers, num_heads = model_shape(model)
    path = Path(opts["store"])
    seconds = 0.0
    for variant, chosen in (("warm-up", examples[:batch]), ("finetuned", examples[batch:])):
        target = path if variant == "finetuned" else path.with_suffix(".warm")
        started = time.perf_counter()
        with (
            AttentionWriter(
                target, model_id="bench", num_layers=num_layers, num_heads=num_heads,
                config_hash="bench",
            ) as writer,
            autocast(opts["precision"], "cpu"),
        ):  # fmt: skip
            for name in ("finetuned", "pretrained"):  # the stage's two variants, same model
                dump_variant(
                    model, chosen, writer, name, TASK, batch_size=batch,
                    pad_id=tokenizer.pad_token_id,
                )  # fmt: skip
        seconds = time.perf_counter() - started
    per_example = 2 * count  # examples x variants
    return {
        "dump_s": seconds / per_example,
        "store_bytes": path.stat().st_size / per_example,
        "peak_gib": _peak_gib(),
    }


def measure_ablate(opts: dict[str, Any]) -> dict[str, float]:
    from pipeline.ablation.importance import gated_logits, head_importance
    from pipeline.ablation.sweep import head_ablations, layer_ablations, sweep
    from pipeline.attention.engine import attach, model_shape
    from pipeline.attention.layerwise import Layerwise
    from pipeline.core.precision import autocast

    tokenizer, model = _setup(opts)
    gflops = matmul_gflops()  # the machine's rate now, in this process
    layerwise = Layerwise.of(attach(model))
    shape = model_shape(model)
    ablate = profile_params(opts["profile"])["ablate"]
    pad, task = tokenizer.pad_token_id, load_task(TASK)
    sweep_rows = _rows(tokenizer, opts["sweep_examples"], opts["length"])
    scored = _rows(tokenizer, opts["importance_examples"], opts["length"])
    pruned = torch.zeros(shape, dtype=torch.bool)
    pruned[:, : shape[1] // 2] = True
    settings = {"pad_id": pad, "batch_size": ablate["batch_size"]}
    with autocast(opts["precision"], "cpu"):
        gated_logits(layerwise, scored.rows[:1], pruned, **settings)  # warm-up
        started = time.perf_counter()
        sweep(
            layerwise, sweep_rows.rows, head_ablations(shape) + layer_ablations(shape),
            mode=ablate["mode"], ablations_per_pass=ablate["ablations_per_pass"],
            cache_budget_mb=ablate["cache_budget_mb"], progress=False, **settings,
        )  # fmt: skip
        sweep_s = (time.perf_counter() - started) / len(sweep_rows.rows)
        started = time.perf_counter()
        head_importance(layerwise, scored.rows, scored.labels, task, pruned=pruned, **settings)
        importance_s = (time.perf_counter() - started) / len(scored.rows)
        started = time.perf_counter()
        gated_logits(layerwise, scored.rows, pruned, **settings)
        gated_s = (time.perf_counter() - started) / len(scored.rows)
    return {
        "sweep_s": sweep_s,
        "matmul_gflops": gflops,
        "importance_s": importance_s,
        "gated_s": gated_s,
        "peak_gib": _peak_gib(),
    }


def measure_analyze(opts: dict[str, Any]) -> dict[str, float]:
    from pipeline.attention.store import AttentionStore
    from pipeline.core.schema import AnalyzeConfig, typed
    from pipeline.kovaleva.analyze import analyze_task

    torch.set_num_threads(opts["threads"])
    node = OmegaConf.create(profile_params(opts["profile"])["analyze"])
    settings = typed(AnalyzeConfig, node)
    started = time.perf_counter()
    result = analyze_task(AttentionStore(opts["store"]), TASK, settings)
    seconds = time.perf_counter() - started
    return {"analyze_s": seconds / len(result.examples), "peak_gib": _peak_gib()}


def matmul_gflops(size: int = 2048, repeat: int = 5) -> float:
    """Best float32 torch.mm rate (GFLOP/s) of two size x size matrices, on torch's threads."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    torch.mm(a, b)
    best = math.inf
    for _ in range(repeat):
        started = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - started)
    return 2 * size**3 / best / 1e9


def in_fresh_process(function, opts: dict[str, Any]) -> dict[str, float]:
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        return pool.submit(function, opts).result()


# --- the projection -------------------------------------------------------------------------


def projection(
    cost: dict[str, dict[str, float]], params: dict[str, Any], shape: Shape
) -> pd.DataFrame:
    """Time, disk and peak memory of each stage of the profile, all tasks and seeds together."""
    finetune, dump, ablate = params["finetune"], params["dump_attention"], params["ablate"]
    prepare, seeds = params["prepare"], len(params["seeds"])
    trained = 1 + int(finetune["baselines"]["random_init"])  # fine-tuned runs per task
    scored = (
        1
        + int(finetune["baselines"]["pretrained_no_finetune"])
        + int(finetune["baselines"]["random_init"])
    )  # evaluated variants per task
    points = len(pruning_schedule(shape.layers * shape.heads, ablate["prune_step"]))
    params_bytes = cost["finetune"]["parameters"] * 4  # float32 weights
    rows = {stage: {"hours": 0.0, "disk_gib": 0.0} for stage in ("finetune", "dump", "ablate")}
    rows |= {"importance": {"hours": 0.0, "disk_gib": 0.0}, "analyze": {"hours": 0.0}}
    for task in params["tasks"]:
        train_n, dev_n = GLUE_SIZES[task]
        train_n = min(train_n, prepare["max_train_rows"] or train_n)
        dev_n = min(dev_n, prepare["max_eval_rows"] or dev_n)
        dumped = min(dev_n, dump["num_examples"] or dev_n)
        swept = min(dev_n, ablate["num_examples"] or dev_n)
        importance_n = ablate["importance_examples"] or train_n
        seconds = {
            "finetune": trained * finetune["epochs"] * train_n * cost["finetune"]["train_s"]
            + scored * dev_n * cost["finetune"]["forward_s"],
            "dump": 2 * dumped * cost["dump"]["dump_s"],
            "ablate": swept * cost["ablate"]["sweep_s"],
            "importance": points
            * (importance_n * cost["ablate"]["importance_s"] + swept * cost["ablate"]["gated_s"]),
            "analyze": dumped * cost["analyze"]["analyze_s"],
        }
        for stage, value in seconds.items():  # every stage runs per (task, seed)
            rows[stage]["hours"] += seeds * value / 3600
        rows["finetune"]["disk_gib"] += seeds * params_bytes / 2**30  # the saved models
        rows["dump"]["disk_gib"] += seeds * 2 * dumped * cost["dump"]["store_bytes"] / 2**30
    rows["finetune"]["peak_gib"] = cost["finetune"]["peak_gib"]
    rows["finetune"]["checkpoint_gib"] = 3 * params_bytes / 2**30  # weights + AdamW m, v
    rows["dump"]["peak_gib"] = cost["dump"]["peak_gib"]
    rows["ablate"]["peak_gib"] = cost["ablate"]["peak_gib"]
    rows["importance"]["peak_gib"] = cost["ablate"]["peak_gib"]
    rows["analyze"]["peak_gib"] = cost["analyze"]["peak_gib"]
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.loc["total"] = table.sum(numeric_only=True)
    table.loc["total", ["peak_gib", "checkpoint_gib"]] = math.nan
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="paper", help="conf/experiment/PROFILE.yaml")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--precision", default="fp32", choices=["auto", "fp32", "bf16", "fp16"])
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--train-batch", type=int, default=32)  # the paper's batch
    parser.add_argument("--train-steps", type=int, default=1)
    parser.add_argument("--dump-examples", type=int, default=16)
    parser.add_argument("--dump-batch", type=int, default=16)
    parser.add_argument("--sweep-examples", type=int, default=2)
    parser.add_argument("--importance-examples", type=int, default=4)
    parser.add_argument("--json", type=Path, help="also write the measurements here")
    args = parser.parse_args()

    params = profile_params(args.profile)
    shape = Shape.of_model(params["model"])
    with tempfile.TemporaryDirectory() as folder:
        opts = {**vars(args), "json": None, "store": str(Path(folder) / "bench.parquet")}
        opts["shape"] = vars(shape)
        cost = {}
        for stage, function in (
            ("finetune", measure_finetune),
            ("dump", measure_dump),
            ("ablate", measure_ablate),
            ("analyze", measure_analyze),
        ):
            cost[stage] = in_fresh_process(function, opts)
            print(f"{stage}: {json.dumps({k: round(v, 4) for k, v in cost[stage].items()})}")
    rates = {
        "finetune": 3 * shape.forward_flops(args.length) / cost["finetune"]["train_s"] / 1e9,
        "sweep": shape.sweep_flops(args.length) / cost["ablate"]["sweep_s"] / 1e9,
    }
    for (name, rate), stage in zip(rates.items(), ("finetune", "ablate"), strict=True):
        gflops = cost[stage]["matmul_gflops"]
        print(
            f"{name}: {rate:.1f} GFLOP/s = {rate / gflops:.0%} of the float32 matmul rate "
            f"measured just before it ({gflops:.1f} GFLOP/s, {args.threads} thread(s))"
        )
    table = projection(cost, params, shape)
    print(
        f"\n{args.profile} profile ({', '.join(params['tasks'])} x {len(params['seeds'])} "
        f"seed(s); {shape}), precision {args.precision}:"
    )
    print(table.round(2).to_string(na_rep=""))
    if args.json:
        record = {"args": {k: str(v) for k, v in vars(args).items()}, "cost": cost}
        record |= {"gflops": rates, "projection": table.round(3).to_dict(orient="index")}
        args.json.write_text(json.dumps(record, indent=2, default=str))


if __name__ == "__main__":
    main()
