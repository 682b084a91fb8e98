"""patterns_train's training, the configured design against the one it replaced, in one run.

    python -m benchmarks.bench_patterns [--workers 2] [--repeat 1] [--only new|old]

Each design trains as the stage trains it (`train.train_classifier`: the cross-validation,
then the classifier and the seed-check ensemble, `--workers` processes of one thread) on the
stage's label folders and seed. The old design is the one the stage ran before the design
study (`OLD`: 16 x 16, the weights, contrast and role channels, eight layers, 4 networks per
fold; records/pattern_cnn/design.md); the new one is conf/patterns/default.yaml's. With
`--repeat` > 1 the designs alternate and each one's fastest run is kept. It prints, per
design, the wall and CPU seconds of the training (the workers' included), the peak memory of
the process and of its largest worker, and the cross-validated accuracy, kappa and each
class's recall on each model's maps; then the ratios, new against old, and whether the
stage's goal holds: at most 60 s of training on 2 cores.
"""

from __future__ import annotations

import argparse
import resource
import time
from dataclasses import dataclass, replace
from pathlib import Path

import torch
from omegaconf import OmegaConf

from pipeline.analyses.patterns_train.settings import PatternClassifier, PatternRule
from pipeline.core.config import CONF_DIR
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.train import TrainedClassifier, train_classifier

ROOT = Path(__file__).resolve().parent.parent
SEED = 42
# the design the stage ran before the design study, as it differs from the configured one
OLD = {
    "input_size": 16,
    "input_channels": ["weights", "contrast", "roles"],
    "channels": [8, 8, 16, 16, 32, 32, 64, 64],
    "epochs": 30,
    "average_last": 10,
    "cv_ensemble": 4,
    "ensemble": 12,
}
GOAL_S = 60.0  # patterns_train's training on 2 cores (the whole stage: at most 120 s together
# with patterns_apply)


@dataclass(frozen=True)
class Timed:
    wall_s: float
    cpu_s: float  # this process and its finished workers
    peak_mib: float  # this process
    worker_peak_mib: float  # the largest worker
    trained: TrainedClassifier


def conf_group(key: str, schema: type):
    """conf/patterns/default.yaml's group `key`, typed by `schema`."""
    raw = OmegaConf.load(CONF_DIR / "patterns" / "default.yaml")[key]
    return OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(schema), raw))


def conf_settings() -> PatternClassifier:
    """The configured classifier's settings."""
    return conf_group("classifier", PatternClassifier)


def label_folders() -> list[Path]:
    """The stage's label folders (`patterns.labels_from`)."""
    names = OmegaConf.load(CONF_DIR / "patterns" / "default.yaml")["labels_from"]
    return [ROOT / "data" / "annotations" / name for name in names]


def rusage_cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def timed_training(folders: list[Path], settings: PatternClassifier) -> Timed:
    """The stage's training of `settings` on `folders`, timed. CPU seconds count this
    process and the workers it waited for (their pool closes before this returns)."""
    rule = conf_group("heuristic", PatternRule)
    cpu = rusage_cpu(resource.RUSAGE_SELF) + rusage_cpu(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    trained = train_classifier(folders, settings, rule, SEED)
    wall = time.perf_counter() - started
    cpu = rusage_cpu(resource.RUSAGE_SELF) + rusage_cpu(resource.RUSAGE_CHILDREN) - cpu
    return Timed(
        wall,
        cpu,
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        trained,
    )


def quality_lines(trained: TrainedClassifier) -> list[str]:
    """Accuracy, kappa and each class's recall on each model's maps, cross-validated."""
    m, table = trained.metrics, trained.tables["recall_by_round"]
    lines = []
    for folder in trained.labelled.folders:
        mine = table[table["labels_from"] == folder].groupby("class")[["labelled", "recalled"]]
        counts = mine.sum()
        recalls = ", ".join(
            f"{c} {counts.loc[c, 'recalled']}/{counts.loc[c, 'labelled']}"
            for c in CLASSES
            if c in counts.index
        )
        lines.append(
            f"  {folder}: accuracy {m[f'cnn.{folder}.accuracy']:.3f} "
            f"[{m[f'cnn.{folder}.accuracy_ci_low']:.3f}, {m[f'cnn.{folder}.accuracy_ci_high']:.3f}]"
            f", kappa {m[f'cnn.{folder}.kappa']:.3f}; recalled {recalls}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", choices=["new", "old"], default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    new = replace(conf_settings(), workers=args.workers)
    designs = {"old": replace(new, **OLD), "new": new}
    if args.only:
        designs = {args.only: designs[args.only]}
    folders = label_folders()
    runs: dict[str, list[Timed]] = {name: [] for name in designs}
    for _ in range(args.repeat):
        for name, settings in designs.items():
            runs[name].append(timed_training(folders, settings))
            print(f"{name}: {runs[name][-1].wall_s:.1f} s", flush=True)
    best = {name: min(timed, key=lambda t: t.wall_s) for name, timed in runs.items()}
    for name, t in best.items():
        s = designs[name]
        print(
            f"{name}: {s.input_size}x{s.input_size}, channels {'+'.join(s.input_channels)}, "
            f"widths {s.channels}, {s.epochs} epochs, {s.cv_ensemble} per fold, 2 x {s.ensemble}"
        )
        print(
            f"  {t.wall_s:.1f} s wall, {t.cpu_s:.1f} CPU s on {args.workers} workers; "
            f"peak memory {t.peak_mib:.0f} MiB, largest worker {t.worker_peak_mib:.0f} MiB"
        )
        print("\n".join(quality_lines(t.trained)))
    if len(best) == 2:
        old, new_run = best["old"], best["new"]
        print(
            f"new / old: {new_run.wall_s / old.wall_s:.3f} wall, "
            f"{new_run.cpu_s / old.cpu_s:.3f} CPU s, "
            f"{new_run.worker_peak_mib / old.worker_peak_mib:.2f} worker peak memory"
        )
    for name, t in best.items():
        verdict = "meets" if t.wall_s <= GOAL_S else "misses"
        print(f"{name}: {t.wall_s:.1f} s {verdict} the {GOAL_S:.0f} s goal for the training")


if __name__ == "__main__":
    main()
