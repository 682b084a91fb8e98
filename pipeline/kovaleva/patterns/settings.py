"""The `patterns` config group (conf/patterns/default.yaml) as typed settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pipeline.core.errors import PipelineError
from pipeline.kovaleva.patterns.cnn import CNNTrainingSettings
from pipeline.kovaleva.patterns.heuristic import Thresholds

LABEL_SOURCES = ("annotations", "heuristic")


@dataclass(frozen=True)
class SampleSettings:
    """Which maps are labelled: `maps_per_task` random maps of each task's `variant` model."""

    variant: str
    maps_per_task: int


@dataclass(frozen=True)
class ClassifierSettings:
    """The CNN's input and layers, the held-out share of the labelled maps, its training."""

    input_size: int
    channels: tuple[int, ...]
    val_fraction: float
    training: CNNTrainingSettings


@dataclass(frozen=True)
class PatternSettings:
    labels: str  # where the labelled maps come from: one of LABEL_SOURCES
    num_examples: int  # dev examples per task whose maps patterns_apply classifies
    sample: SampleSettings
    thresholds: Thresholds
    classifier: ClassifierSettings
    threads: int  # torch threads of the CNN stages
    seed: int  # of the sample and of the CNN's split, initialisation and batches

    @classmethod
    def from_config(cls, node: Mapping, seed: int) -> PatternSettings:
        """From the `patterns` config node and the global seed."""
        if node["labels"] not in LABEL_SOURCES:
            raise PipelineError(
                f"unknown patterns.labels '{node['labels']}'; use {' or '.join(LABEL_SOURCES)}"
            )
        classifier = node["classifier"]
        return cls(
            labels=str(node["labels"]),
            num_examples=int(node["num_examples"]),
            sample=SampleSettings(
                variant=str(node["sample"]["variant"]),
                maps_per_task=int(node["sample"]["maps_per_task"]),
            ),
            thresholds=Thresholds(**node["heuristic"]),
            classifier=ClassifierSettings(
                input_size=int(classifier["input_size"]),
                channels=tuple(int(c) for c in classifier["channels"]),
                val_fraction=float(classifier["val_fraction"]),
                training=CNNTrainingSettings(
                    epochs=int(classifier["epochs"]),
                    batch_size=int(classifier["batch_size"]),
                    learning_rate=float(classifier["learning_rate"]),
                    seed=seed,
                ),
            ),
            threads=int(classifier["threads"]),
            seed=seed,
        )
