"""Loading a model says what it did in one line: transformers' load report and progress bars
stay hidden, a fresh classifier head is named, and a hub id out of reach fails at once (or
loads from the local cache) instead of retrying for a minute."""

from __future__ import annotations

import logging

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
