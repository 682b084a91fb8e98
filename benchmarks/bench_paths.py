"""What the engine's hook path costs against its interface path, on one tiny random BERT.

    python -m benchmarks.bench_paths [--layers 4] [--batch 4] [--length 32] [--repeats 30]
                                     [--threads 1]

The same weights run three ways per scenario: the plain model (SDPA, no engine; the baseline),
attached through the AttentionInterface (`attach(model)`), and attached through forward hooks
(`attach(model, route="hooks")`, the path DeBERTa-v2/v3 and MPNet take; it runs eager
attention). Scenarios: an empty HeadControl, capture of every layer, half the heads
uniform-disabled, the same heads zero-disabled, and a gate on every head. Each time is the
fastest of `--repeats` forward passes (no gradient), the three runs taking turns; the ratios
are against the plain model and hooks / interface, all from this one run. One thread: the
tiny model gains nothing from more, and its timings are steadier on a shared machine.
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable

import torch
from transformers import AutoModel, BertConfig, PreTrainedModel

from pipeline.attention.engine import HeadControl, attach


def scenarios(layers: int, heads: int) -> dict[str, Callable[[], HeadControl]]:
    half = torch.zeros(layers, heads, dtype=torch.bool)
    half[:, : heads // 2] = True
    return {
        "empty control": HeadControl,
        "capture all layers": lambda: HeadControl(capture=range(layers)),
        "uniform, half the heads": lambda: HeadControl(disabled=half, mode="uniform"),
        "zero, half the heads": lambda: HeadControl(disabled=half, mode="zero"),
        "gate on every head": lambda: HeadControl(gate=torch.full((layers, heads), 0.5)),
    }


@torch.no_grad()
def fastest_seconds(
    runs: dict[str, tuple[PreTrainedModel, Callable[[], HeadControl] | None]],
    batch: dict[str, torch.Tensor],
    repeats: int,
) -> dict[str, float]:
    """The fastest wall time of one forward pass of each run (the one least disturbed by other
    processes), the runs taking turns, after one warm-up round."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats + 1):
        for name, (model, control) in runs.items():
            extra = {"head_control": control()} if control is not None else {}
            start = time.perf_counter()
            model(**batch, **extra)
            times[name].append(time.perf_counter() - start)
    return {name: min(values[1:]) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--length", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=100, hidden_size=64, num_hidden_layers=args.layers, num_attention_heads=4,
        intermediate_size=128, max_position_embeddings=max(args.length, 64),
    )  # fmt: skip
    plain = AutoModel.from_config(config).eval()
    interface = attach(copy.deepcopy(plain))
    hooks = attach(copy.deepcopy(plain), route="hooks")
    ids = torch.randint(5, 100, (args.batch, args.length))
    mask = torch.ones_like(ids)
    mask[1::2, args.length // 2 :] = 0  # every other row half padding
    batch = {"input_ids": ids, "attention_mask": mask}

    print(f"tiny BERT {args.layers} layers x 4 heads, batch {args.batch} x {args.length} tokens")
    print(f"{'scenario':<26}{'plain ms':>10}{'interface':>11}{'hooks':>11}{'hooks/interface':>17}")
    for name, control in scenarios(args.layers, 4).items():
        runs = {
            "plain": (plain, None),
            "interface": (interface, control),
            "hooks": (hooks, control),
        }
        took = fastest_seconds(runs, batch, args.repeats)
        print(
            f"{name:<26}{took['plain'] * 1e3:>10.2f}{took['interface'] / took['plain']:>10.2f}x"
            f"{took['hooks'] / took['plain']:>10.2f}x{took['hooks'] / took['interface']:>16.2f}x"
        )
    print("(interface and hooks: time over the plain model's, measured in the same round)")


if __name__ == "__main__":
    main()
