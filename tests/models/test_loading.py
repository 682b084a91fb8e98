"""Loading a model says what it did in one line: transformers' load report and progress bars
stay hidden, a fresh classifier head is named, and a hub id out of reach fails at once (or
loads from the local cache) instead of retrying for a minute."""

from __future__ import annotations

import logging
import os

import pytest
from omegaconf import OmegaConf

from pipeline.core.errors import PipelineError
from pipeline.models import loading

HUB_ID = OmegaConf.create(
    {"name": "hub_model", "name_or_path": "org/model", "tokenizer": None,
     "random_config": None, "split_zip": None}
)  # fmt: skip


def test_a_classifier_loads_with_one_line_naming_its_fresh_head(
    minilm_cfg, tokenizer, capfd, caplog
) -> None:
    with caplog.at_level(logging.INFO, logger=loading.__name__):
        loading.load_classifier(minilm_cfg, tokenizer, num_labels=2)
    printed = capfd.readouterr()
    assert "LOAD REPORT" not in printed.err + printed.out
    assert "Loading weights" not in printed.err  # transformers' progress bar
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and lines[0].endswith("classifier.bias, classifier.weight")
    assert caplog.records[0].levelno == logging.INFO  # expected: a new head


def test_a_saved_model_loads_back_quietly_with_nothing_missing(
    minilm_cfg, tokenizer, tmp_path, capfd, caplog
) -> None:
    model = loading.load_classifier(minilm_cfg, tokenizer, num_labels=3)
    loading.save_finetuned(model, tokenizer, tmp_path)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger=loading.__name__):
        loaded = loading.load_finetuned(tmp_path)
    assert "Writing model shards" not in capfd.readouterr().err
    assert caplog.records == [] and loaded.config.num_labels == 3


def test_a_hub_id_out_of_reach_fails_at_once_in_one_line(monkeypatch) -> None:
    def tried(*args, **kwargs):
        raise AssertionError("from_pretrained ran: it would retry the hub for a minute")

    monkeypatch.setattr(loading.AutoTokenizer, "from_pretrained", tried)
    monkeypatch.setattr(loading, "try_to_load_from_cache", lambda repo, name: None)
    with pytest.raises(PipelineError) as error:
        loading.load_tokenizer(HUB_ID)
    message = str(error.value)
    assert "\n" not in message and "'org/model'" in message
    assert "out of reach" in message and "model.name_or_path=" in message


def test_a_cached_hub_id_loads_from_the_cache_when_the_hub_is_out_of_reach(monkeypatch) -> None:
    calls = []
    monkeypatch.setattr(loading, "try_to_load_from_cache", lambda repo, name: f"/cache/{repo}")
    monkeypatch.setattr(
        loading.AutoTokenizer, "from_pretrained", lambda *a, **kw: calls.append((a, kw))
    )
    loading.load_tokenizer(HUB_ID)
    assert calls == [(("org/model",), {"local_files_only": True})]


def _model(name_or_path: str, tokenizer: str | None = None):
    return OmegaConf.merge(HUB_ID, {"name_or_path": name_or_path, "tokenizer": tokenizer})


@pytest.mark.parametrize(
    "missing", ["/nonexistent/model", "./no_such_model", "../no_such_model", "a/b/model"]
)
def test_a_missing_local_folder_fails_in_one_line_naming_the_key(
    missing, tokenizer, monkeypatch
) -> None:
    def tried(*args, **kwargs):
        raise AssertionError("from_pretrained ran on a folder that is not there")

    monkeypatch.setattr(loading.AutoTokenizer, "from_pretrained", tried)
    monkeypatch.setattr(loading.AutoModel, "from_pretrained", tried)
    line = (
        f"model.name_or_path '{missing}': no such folder; give a local model folder, "
        "a hub id (org/name), or model=minilm_l6"
    )
    for load in (
        lambda: loading.load_tokenizer(_model(missing)),
        lambda: loading.load_encoder(_model(missing), tokenizer),
        lambda: loading.load_classifier(_model(missing), tokenizer, num_labels=2),
    ):
        with pytest.raises(PipelineError) as error:
            load()
        assert str(error.value) == line


def test_a_missing_tokenizer_folder_names_model_tokenizer() -> None:
    with pytest.raises(PipelineError, match=r"^model.tokenizer '/no/tokenizer': no such folder"):
        loading.load_tokenizer(_model("org/model", tokenizer="/no/tokenizer"))


@pytest.mark.parametrize("hub_id", ["org/model", "bert-base-uncased", "models/x"])
def test_a_hub_id_is_not_taken_for_a_missing_folder(hub_id, monkeypatch) -> None:
    monkeypatch.setattr(loading, "try_to_load_from_cache", lambda repo, name: None)
    with pytest.raises(PipelineError, match=f"cannot load model '{hub_id}'.*out of reach"):
        loading.load_tokenizer(_model(hub_id))


def test_a_local_folder_given_by_path_loads(minilm_cfg, tmp_path, monkeypatch) -> None:
    folder = loading.model_location(minilm_cfg)  # the package's folder, absolute
    monkeypatch.chdir(tmp_path)
    relative = os.path.relpath(folder, tmp_path)
    assert relative.startswith("../")
    assert loading.model_location(_model(relative)) == relative
