"""Cost of a profile (default: paper): each stage's per-example cost on a model of the
profile's shape, measured on this machine, projected to conf/experiment/<profile>.yaml.

    python -m benchmarks.bench_cost [--profile paper] [--device cpu] [--threads 2]
        [--stages finetune dump ablate analyze] [--precision fp32] [--train-batch 32]
        [--train-steps 1] [--dump-examples 16] [--sweep-examples 2] [--importance-examples 4]
        [--length 128] [--json PATH]

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

`--device cuda` runs finetune, dump and ablate on the GPU (analyze reads the store on the
CPU whatever the device) and also reports each process's peak GPU memory.

The fine-tuning and ablation processes first measure the matmul rate in the run's compute
dtype (float32 unless `--precision` sets a 16-bit one; best of N x N torch.mm, N = 2048 on
the CPU, 8192 on a GPU) and state fine-tuning and the sweep as a fraction of it (both in the
same process, seconds apart, so a machine shared with other jobs skews both alike). FLOPs come
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
from pipeline.core.precision import device_dtype
from pipeline.core.schema import load_model, load_task
from tools.params import compose_params

REPO = Path(__file__).resolve().parent.parent
CPU = torch.device("cpu")
STAGES = ("finetune", "dump", "ablate", "analyze")  # the measuring processes, in order
ROWS = ("finetune", "dump", "ablate", "importance", "analyze")  # the projection's rows
MEASURED_BY = {"importance": "ablate"}  # rows measured in another row's process
PEAKS = ("peak_gib", "gpu_peak_gib")  # peak resident memory, peak allocated GPU memory
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


def _peaks(device: torch.device) -> dict[str, float]:
    """The process's peak resident memory, and on a GPU its peak allocated GPU memory (GiB)."""
    peaks = {"peak_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}  # KiB
    if device.type == "cuda":
        peaks["gpu_peak_gib"] = torch.cuda.max_memory_allocated(device) / 2**30
    return peaks


def _clock(device: torch.device) -> float:
    """perf_counter once the device has finished the work queued on it."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter()


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
    return tokenizer, model.to(opts["device"]).eval()


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
    from pipeline.analyses.finetune.settings import FinetuneConfig
    from pipeline.core.schema import CompileConfig, typed
    from pipeline.models.training import predict, train

    tokenizer, model = _setup(opts)
    device = torch.device(opts["device"])
    gflops = matmul_gflops(device, opts["precision"])  # the machine's rate now, in this process
    batch = opts["train_batch"]
    data = _rows(tokenizer, batch * (1 + opts["train_steps"]), opts["length"])
    params = profile_params(opts["profile"])
    node = OmegaConf.create(params["finetune"])
    node.epochs, node.batch_size, node.checkpoint_every = 1, batch, 0
    settings = typed(FinetuneConfig, node)
    task, pad = load_task(TASK), tokenizer.pad_token_id
    # the profile's own determinism and compile settings (the warm-up compiles)
    compiled = typed(CompileConfig, params["compile"])
    run = {"device": device, "precision": opts["precision"], "compile_settings": compiled}
    deterministic = params["deterministic"]
    warm_up = (data.rows[:batch], data.labels[:batch])
    train(model, task, *warm_up, settings, 0, pad, **run, deterministic=deterministic)
    started = _clock(device)
    timed = slice(batch, None)
    train(
        model, task, data.rows[timed], data.labels[timed], settings, 0, pad, **run,
        deterministic=deterministic,
    )  # fmt: skip
    seconds = _clock(device) - started
    predict(model, data.rows[:batch], batch, pad, **run)  # warm-up
    started = _clock(device)
    predict(model, data.rows, batch, pad, **run)
    forward = (_clock(device) - started) / len(data.rows)
    return {
        "deterministic": deterministic,
        "compile": compiled.enabled,
        "train_s": seconds / (batch * opts["train_steps"]),
        "matmul_gflops": gflops,
        "forward_s": forward,
        "parameters": sum(p.numel() for p in model.parameters()),
        **_peaks(device),
    }


def measure_dump(opts: dict[str, Any]) -> dict[str, float]:
    from pipeline.attention.dump_attention import dump_variant, tokenize_examples
    from pipeline.attention.engine import attach, model_shape
    from pipeline.attention.store_writer import AttentionWriter
    from pipeline.core.precision import autocast

    tokenizer, model = _setup(opts)
    model, device = attach(model), torch.device(opts["device"])
    count, batch = opts["dump_examples"], opts["dump_batch"]
    frame = _frame(count + batch, opts["length"])
    examples = tokenize_examples(tokenizer, load_task(TASK), frame, opts["length"])
    num_layers, num_heads = model_shape(model)
    path = Path(opts["store"])
    seconds = 0.0
    for variant, chosen in (("warm-up", examples[:batch]), ("finetuned", examples[batch:])):
        target = path if variant == "finetuned" else path.with_suffix(".warm")
        started = _clock(device)
        with (
            AttentionWriter(
                target, model_id="bench", num_layers=num_layers, num_heads=num_heads,
                config_hash="bench",
            ) as writer,
            autocast(opts["precision"], device),
        ):  # fmt: skip
            for name in ("finetuned", "pretrained"):  # the stage's two variants, same model
                dump_variant(
                    model, chosen, writer, name, TASK, batch_size=batch,
                    pad_id=tokenizer.pad_token_id,
                )  # fmt: skip
        seconds = _clock(device) - started
    per_example = 2 * count  # examples x variants
    return {
        "dump_s": seconds / per_example,
        "store_bytes": path.stat().st_size / per_example,
        **_peaks(device),
    }


def measure_ablate(opts: dict[str, Any]) -> dict[str, float]:
    from pipeline.ablation.importance import gated_logits, head_importance
    from pipeline.ablation.sweep import head_ablations, layer_ablations, sweep
    from pipeline.attention.engine import attach, model_shape
    from pipeline.attention.layerwise import Layerwise
    from pipeline.core.precision import autocast

    tokenizer, model = _setup(opts)
    device = torch.device(opts["device"])
    gflops = matmul_gflops(device, opts["precision"])  # the machine's rate now, in this process
    layerwise = Layerwise.of(attach(model))
    shape = model_shape(model)
    ablate = profile_params(opts["profile"])["ablate"]
    pad, task = tokenizer.pad_token_id, load_task(TASK)
    sweep_rows = _rows(tokenizer, opts["sweep_examples"], opts["length"])
    scored = _rows(tokenizer, opts["importance_examples"], opts["length"])
    pruned = torch.zeros(shape, dtype=torch.bool)
    pruned[:, : shape[1] // 2] = True
    settings = {"pad_id": pad, "batch_size": ablate["batch_size"]}
    with autocast(opts["precision"], device):
        gated_logits(layerwise, scored.rows[:1], pruned, **settings)  # warm-ups
        head_importance(
            layerwise, scored.rows[:1], scored.labels[:1], task, pruned=pruned, **settings
        )
        started = _clock(device)
        sweep(
            layerwise, sweep_rows.rows, head_ablations(shape) + layer_ablations(shape),
            mode=ablate["mode"], ablations_per_pass=ablate["ablations_per_pass"],
            cache_budget_mb=ablate["cache_budget_mb"], progress=False, **settings,
        )  # fmt: skip
        sweep_s = (_clock(device) - started) / len(sweep_rows.rows)
        started = _clock(device)
        head_importance(layerwise, scored.rows, scored.labels, task, pruned=pruned, **settings)
        importance_s = (_clock(device) - started) / len(scored.rows)
        started = _clock(device)
        gated_logits(layerwise, scored.rows, pruned, **settings)
        gated_s = (_clock(device) - started) / len(scored.rows)
    return {
        "sweep_s": sweep_s,
        "matmul_gflops": gflops,
        "importance_s": importance_s,
        "gated_s": gated_s,
        **_peaks(device),
    }


def measure_analyze(opts: dict[str, Any]) -> dict[str, float]:
    from pipeline.analyses.analyze.settings import AnalyzeConfig
    from pipeline.attention.store import AttentionStore
    from pipeline.core.schema import typed
    from pipeline.kovaleva.analyze import analyze_task

    torch.set_num_threads(opts["threads"])
    node = OmegaConf.create(profile_params(opts["profile"])["analyze"])
    settings = typed(AnalyzeConfig, node)
    started = time.perf_counter()
    result = analyze_task(AttentionStore(opts["store"]), TASK, settings)
    seconds = time.perf_counter() - started
    return {"analyze_s": seconds / len(result.examples), **_peaks(CPU)}


def matmul_gflops(device: torch.device = CPU, precision: str = "fp32", repeat: int = 5) -> float:
    """Best torch.mm rate (GFLOP/s) of two N x N matrices in the compute dtype of `precision`
    on `device` (N = 2048 on the CPU, on torch's threads; 8192 on a GPU)."""
    size = 8192 if device.type == "cuda" else 2048
    dtype = device_dtype(precision, device)
    a, b = (torch.randn(size, size, device=device, dtype=dtype) for _ in range(2))
    torch.mm(a, b)
    best = math.inf
    for _ in range(repeat):
        started = _clock(device)
        torch.mm(a, b)
        best = min(best, _clock(device) - started)
    return 2 * size**3 / best / 1e9


def in_fresh_process(function, opts: dict[str, Any]) -> dict[str, float]:
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        return pool.submit(function, opts).result()


MEASURES = {
    "finetune": measure_finetune,
    "dump": measure_dump,
    "ablate": measure_ablate,
    "analyze": measure_analyze,
}


# --- the projection -------------------------------------------------------------------------


def task_cost(row: str, c: dict[str, float], n: dict[str, int]) -> tuple[float, float]:
    """(seconds, bytes on disk) of one task and seed in the projection's `row`, from the costs
    `c` of the process that measured it and the task's counts `n`."""
    match row:
        case "finetune":  # the trained runs, the scored variants; the saved float32 model
            seconds = n["trained"] * n["epochs"] * n["train"] * c["train_s"]
            return seconds + n["scored"] * n["dev"] * c["forward_s"], 4 * c["parameters"]
        case "dump":  # two variants
            return 2 * n["dumped"] * c["dump_s"], 2 * n["dumped"] * c["store_bytes"]
        case "ablate":
            return n["swept"] * c["sweep_s"], 0.0
        case "importance":  # each point of the pruning curve: importance, then the gated forward
            return n["points"] * (
                n["importance"] * c["importance_s"] + n["swept"] * c["gated_s"]
            ), 0.0
        case "analyze":
            return n["dumped"] * c["analyze_s"], 0.0
    raise ValueError(f"no projection row '{row}'")


def projection(
    cost: dict[str, dict[str, float]], params: dict[str, Any], shape: Shape
) -> pd.DataFrame:
    """Time, disk and peak memory of each measured stage of the profile (the keys of `cost`;
    the importance row comes with ablate), all tasks and seeds together."""
    finetune, dump, ablate = params["finetune"], params["dump_attention"], params["ablate"]
    prepare, seeds = params["prepare"], len(params["seeds"])
    baselines = finetune["baselines"]
    processes = {row: MEASURED_BY.get(row, row) for row in ROWS}  # row -> its measuring process
    measured = {row: process for row, process in processes.items() if process in cost}
    rows = {row: {"hours": 0.0, "disk_gib": 0.0} for row in measured}
    for task in params["tasks"]:
        train_n, dev_n = GLUE_SIZES[task]
        train_n = min(train_n, prepare["max_train_rows"] or train_n)
        dev_n = min(dev_n, prepare["max_eval_rows"] or dev_n)
        counts = {
            "trained": 1 + int(baselines["random_init"]),  # fine-tuned runs per task
            "scored": 1 + int(baselines["pretrained_no_finetune"]) + int(baselines["random_init"]),
            "epochs": finetune["epochs"],
            "train": train_n,
            "dev": dev_n,
            "dumped": min(dev_n, dump["num_examples"] or dev_n),
            "swept": min(dev_n, ablate["num_examples"] or dev_n),
            "importance": ablate["importance_examples"] or train_n,
            "points": len(pruning_schedule(shape.layers * shape.heads, ablate["prune_step"])),
        }
        for row, process in measured.items():  # every stage runs per (task, seed)
            seconds, disk = task_cost(row, cost[process], counts)
            rows[row]["hours"] += seeds * seconds / 3600
            rows[row]["disk_gib"] += seeds * disk / 2**30
    for row, process in measured.items():
        rows[row] |= {key: cost[process][key] for key in PEAKS if key in cost[process]}
    if "finetune" in cost:  # weights + AdamW's two moments
        rows["finetune"]["checkpoint_gib"] = 3 * 4 * cost["finetune"]["parameters"] / 2**30
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.loc["total"] = table.sum(numeric_only=True)
    table.loc["total", [c for c in table.columns if c not in ("hours", "disk_gib")]] = math.nan
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="paper", help="conf/experiment/PROFILE.yaml")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--stages",
        nargs="+",
        default=list(STAGES),
        choices=STAGES,
        help="what to measure (analyze reads the store that dump writes)",
    )
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
        for stage in args.stages:
            cost[stage] = in_fresh_process(MEASURES[stage], opts)
            print(f"{stage}: {json.dumps({k: round(v, 4) for k, v in cost[stage].items()})}")
    flops = {  # per example: a training step (3x the forward), the sweep
        "finetune": ("train_s", 3 * shape.forward_flops(args.length)),
        "ablate": ("sweep_s", shape.sweep_flops(args.length)),
    }
    rates = {
        stage: flop / cost[stage][key] / 1e9
        for stage, (key, flop) in flops.items()
        if stage in cost
    }
    dtype = str(device_dtype(args.precision, torch.device(args.device))).removeprefix("torch.")
    where = "a GPU" if args.device == "cuda" else f"{args.threads} thread(s)"
    for stage, rate in rates.items():
        gflops = cost[stage]["matmul_gflops"]
        print(
            f"{'sweep' if stage == 'ablate' else stage}: {rate:.1f} GFLOP/s = "
            f"{rate / gflops:.0%} of the {dtype} matmul rate measured just before it "
            f"({gflops:.1f} GFLOP/s, {where})"
        )
    table = projection(cost, params, shape)
    print(
        f"\n{args.profile} profile ({', '.join(params['tasks'])} x {len(params['seeds'])} "
        f"seed(s); {shape}), on {args.device}, precision {args.precision}:"
    )
    print(table.round(2).to_string(na_rep=""))
    if args.json:
        record = {"args": {k: str(v) for k, v in vars(args).items()}, "cost": cost}
        record |= {
            "gflops": {"sweep" if k == "ablate" else k: v for k, v in rates.items()},
            "projection": table.round(3).to_dict(orient="index"),
        }
        args.json.write_text(json.dumps(record, indent=2, default=str))


if __name__ == "__main__":
    main()
