"""Padding of fine-tuning's batches, per task of a profile, without training.

    python -m benchmarks.bench_padding [--profile quick] [--multiple 8 --multiple 16] [--json PATH]

For each task of the profile: its training rows as the profile prepares and encodes them
(prepare's seeded subset, `shared.max_length`, the profile's model's tokenizer), then every
epoch's batches (`finetune.epochs`, `finetune.batch_size`, seed `seed + epoch` as `train`
draws them), and the share of the batches' tokens that are padding (pad / (real + pad)):

- `re-cut`: the grouping's batches laid end to end and cut again into fixed-size batches, as
  the loop did before it iterated the batches themselves (the one short batch shifts every
  later cut off its length group);
- `grouped`: the grouping's batches as `train` iterates them;
- `grouped, multiple of N`: the same, each batch padded up to a multiple of N pieces
  (`compile.pad_multiple`: what bucketing the lengths for `torch.compile` costs).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from benchmarks.bench_cost import profile_params
from benchmarks.bench_step import training_rows
from pipeline.core.schema import ModelConfig, load_task, typed
from pipeline.data.batching import length_grouped_batches
from pipeline.data.encoding import bucketed_width
from pipeline.models.loading import load_tokenizer


def padding_share(lengths: list[int], batches: list[list[int]], multiple: int = 1) -> float:
    """The share of padding among the tokens of `batches`, each padded to its longest row
    rounded up to a multiple of `multiple`."""
    real = sum(lengths[i] for batch in batches for i in batch)
    padded = sum(len(b) * bucketed_width(max(lengths[i] for i in b), multiple) for b in batches)
    return 1 - real / padded


def recut(batches: list[list[int]], batch_size: int) -> list[list[int]]:
    """`batches` end to end, cut again into batches of `batch_size`."""
    flat = [i for batch in batches for i in batch]
    return [flat[i : i + batch_size] for i in range(0, len(flat), batch_size)]


def task_padding(
    lengths: list[int], batch_size: int, epochs: int, seed: int, multiples: list[int]
) -> dict[str, float]:
    """Each batching's padding share over all epochs of one task."""
    grouped = [
        batch
        for epoch in range(epochs)
        for batch in length_grouped_batches(lengths, batch_size, seed + epoch)
    ]
    recut_batches = [
        batch
        for epoch in range(epochs)
        for batch in recut(length_grouped_batches(lengths, batch_size, seed + epoch), batch_size)
    ]
    shares = {
        "re-cut": padding_share(lengths, recut_batches),
        "grouped": padding_share(lengths, grouped),
    }
    for multiple in multiples:
        shares[f"grouped, multiple of {multiple}"] = padding_share(lengths, grouped, multiple)
    return shares


def run(profile_name: str, multiples: list[int]) -> dict[str, Any]:
    profile = profile_params(profile_name)
    tokenizer = load_tokenizer(typed(ModelConfig, profile["model"]))
    finetune, seed = profile["finetune"], profile["seed"]
    tasks = {}
    for name in profile["tasks"]:
        data = training_rows(tokenizer, load_task(name), profile, seed)
        lengths = [len(row["input_ids"]) for row in data.rows]
        shares = task_padding(lengths, finetune["batch_size"], finetune["epochs"], seed, multiples)
        tasks[name] = {"rows": len(lengths), **shares}
    settings = {key: finetune[key] for key in ("epochs", "batch_size")}
    return {"profile": profile_name, "seed": seed, **settings, "tasks": tasks}


def markdown(result: dict[str, Any]) -> str:
    """The result as a table: one row per task, one column per batching."""
    columns = [key for key in next(iter(result["tasks"].values())) if key != "rows"]
    lines = [
        f"{result['profile']} profile, seed {result['seed']}, {result['epochs']} epochs, "
        f"batches of {result['batch_size']}: the share of padding among the batches' tokens",
        "",
        "| task | rows | " + " | ".join(columns) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    for task, row in result["tasks"].items():
        shares = " | ".join(f"{100 * row[c]:.1f}%" for c in columns)
        lines.append(f"| {task} | {row['rows']} | {shares} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="quick", help="experiment profile (conf/experiment)")
    parser.add_argument(
        "--multiple", type=int, action="append", default=None,
        help="also pad each batch up to a multiple of this many pieces (repeatable; default 8, 16)",
    )  # fmt: skip
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args()
    result = run(args.profile, args.multiple or [8, 16])
    print(markdown(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
