"""The `patterns` config group (conf/patterns/default.yaml) as typed settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pipeline.core.errors import PipelineError
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.cnn import CNNTrainingSettings
from pipeline.kovaleva.patterns.heuristic import Thresholds


@dataclass(frozen=True)
class SampleSettings:
    """Which maps are drawn for labelling: `per_class` maps of each rule class of `classes`
    among the maps of the `variants` models."""

    variants: tuple[str, ...]
    classes: tuple[str, ...]
    per_class: int


@dataclass(frozen=True)
class ClassifierSettings:
    """The CNN's input and layers, its cross-validation and training."""

    input_size: int
    channels: tuple[int, ...]
    dropout: float  # before the linear layer
    folds: int
    ensemble: int  # networks averaged into the classifier
    cv_ensemble: int  # networks averaged in each cross-validation fold
    workers: int  # processes training networks side by side (1: in the stage's process)
    bootstrap_resamples: int
    training: CNNTrainingSettings


@dataclass(frozen=True)
class PatternSettings:
    labels_from: str  # the label folder (a model name) whose visual labels train the CNN
    num_examples: int  # dev examples per task whose maps patterns_apply classifies
    sample: SampleSettings
    thresholds: Thresholds
    classifier: ClassifierSettings
    threads: int  # torch threads of the CNN stages
    seed: int  # of the sample and of the CNN's folds, initialisation and batches

    @classmethod
    def from_config(cls, node: Mapping, seed: int) -> PatternSettings:
        """From the `patterns` config node and the global seed."""
        classifier = node["classifier"]
        unknown = [c for c in node["sample"]["classes"] if c not in CLASSES]
        if unknown:
            raise PipelineError(
                f"patterns.sample.classes: unknown class '{unknown[0]}'; use {', '.join(CLASSES)}"
            )
        return cls(
            labels_from=str(node["labels_from"]),
            num_examples=int(node["num_examples"]),
            sample=SampleSettings(
                variants=tuple(str(v) for v in node["sample"]["variants"]),
                classes=tuple(str(c) for c in node["sample"]["classes"]),
                per_class=int(node["sample"]["per_class"]),
            ),
            thresholds=Thresholds(**node["heuristic"]),
            classifier=ClassifierSettings(
                input_size=int(classifier["input_size"]),
                channels=tuple(int(c) for c in classifier["channels"]),
                dropout=float(classifier["dropout"]),
                folds=int(classifier["folds"]),
                ensemble=int(classifier["ensemble"]),
                cv_ensemble=int(classifier["cv_ensemble"]),
                workers=int(classifier["workers"]),
                bootstrap_resamples=int(classifier["bootstrap_resamples"]),
                training=CNNTrainingSettings(
                    epochs=int(classifier["epochs"]),
                    batch_size=int(classifier["batch_size"]),
                    learning_rate=float(classifier["learning_rate"]),
                    average_last=int(classifier["average_last"]),
                    seed=seed,
                ),
            ),
            threads=int(classifier["threads"]),
            seed=seed,
        )
