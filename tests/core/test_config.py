"""Typed configs: a wrong type, a misspelt choice or an unknown key fails at composition with
the key named, under Hydra, under DVC's own composition, and when a stage reads params.yaml."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import Field, fields, is_dataclass
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException
from omegaconf import MISSING, OmegaConf
from omegaconf.errors import InterpolationResolutionError, ValidationError

from pipeline.analyses.prepare.settings import PrepareConfig
from pipeline.core import config_schema, schema
from pipeline.core.config import CONF_DIR, group_options
from pipeline.core.errors import PipelineError
from pipeline.core.overrides import check_overrides
from pipeline.core.run_config import load_dvc_config as _load_dvc_config
from pipeline.core.schema import load_task, typed
from tests.support.builders import composed, composed_yaml
from tests.support.paths import REPO
from tools.params import compose_params


def composition_error(override: str) -> str:
    """The messages of the composition error (and its causes) for one override."""
    with pytest.raises(ConfigCompositionException) as caught:
        compose_params([override])
    messages, error = [], caught.value
    while error is not None:
        messages.append(str(error))
        error = error.__cause__
    return "\n".join(messages)


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("finetune.epochs=three", "finetune.epochs"),
        ("shared.max_length=long", "shared.max_length"),
        ("ablate.mode=zeroo", "ablate.mode"),
        ("dump_attention.quantize=int4", "dump_attention.quantize"),
        ("prepare.source=web", "prepare.source"),
    ],
)
def test_a_wrong_value_fails_at_composition_naming_the_key(override: str, key: str) -> None:
    assert key in composition_error(override)


@pytest.mark.parametrize(
    ("override", "key", "valid"),
    [
        ("tasks=[sst2,sst3]", "tasks[1]", "sst2"),
        ("measures.measures=[weights,weight]", "measures.measures[1]", "rollout"),
        ("dump_attention.measures=[rollout]", "dump_attention.measures[0]", "norms"),
        ("patterns.sample.classes=[vertcal]", "patterns.sample.classes[0]", "vertical+diagonal"),
        ("analyze.measure=norm", "analyze.measure", "norms"),
        ("seeds=[x]", "seeds[0]", "Integer"),
    ],
)
def test_a_misspelt_list_item_fails_at_composition_naming_item_and_choices(
    override: str, key: str, valid: str
) -> None:
    message = composition_error(override)
    assert key in message and valid in message


def test_the_task_choices_are_the_task_files() -> None:
    assert [t.value for t in schema.Task] == group_options("task")
    assert schema.Task.mrpc in OmegaConf.create(compose_params(["tasks=[mrpc]"])).tasks


def test_seeds_without_the_primary_seed_fail_at_composition_in_one_line() -> None:
    missing = r"`seeds` \[43\] does not contain the primary `seed` 42; add 42"
    with pytest.raises(InterpolationResolutionError, match=missing):
        compose_params(["seeds=[43]"])
    assert "seed_in_seeds: true" in compose_params(["seeds=[43]", "seed=43"])


def test_an_unknown_key_fails_at_composition() -> None:
    assert "finetune.epoch" in composition_error("finetune.epoch=3")


def test_the_negation_word_no_stays_a_word() -> None:
    negation = composed().analyze.token_types.negation.lower
    assert "no" in negation and False not in negation


def test_every_config_group_is_typed() -> None:
    # profiles override typed groups; hydra/ is Hydra's own; scale/ configures the parallel
    # runner, composed on its own and typed by pipeline/scale/settings.py
    untyped = {"experiment", "hydra", "scale"}
    groups = {p.name for p in CONF_DIR.iterdir() if p.is_dir()} - untyped
    assert groups <= set(config_schema.Config.__dataclass_fields__)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("finetune.epochs=three", "Error merging override finetune.epochs=three; Value 'three'"),
        (
            "finetune.epoch=3",
            "unknown config key `finetune.epoch`; did you mean `finetune.epochs`?",
        ),
        ("model=bert", "unknown model 'bert'; valid models: "),
        ("seeds=[43]", "DvcException: `seeds` [43] does not contain the primary `seed` 42;"),
        (
            "finetune.epochs=0",
            "DvcException: finetune.epochs=0: must be at least 1; set finetune.epochs=1 or more "
            "(params.yaml is unchanged)",
        ),
    ],
)
def test_dvc_composition_is_typed_and_checked_through_the_hydra_plugin(
    tmp_path: Path, override: str, message: str
) -> None:
    """DVC composes params.yaml in a process that never imports the project: the schema and
    the override checks must come in through `hydra.plugins_path` (.dvc/config), and an error
    must reach DVC as a DvcException (one `ERROR:` line, not "unexpected error")."""
    script = (
        "from dvc.utils.hydra import compose_and_dump\n"
        f"compose_and_dump({str(tmp_path / 'p.yaml')!r}, {str(CONF_DIR)!r}, None, 'config', "
        f"{str(REPO / 'tools')!r}, [{override!r}])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode != 0 and not (tmp_path / "p.yaml").exists()
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("dvc.exceptions.DvcException: ") and message in last, result.stderr
    assert "plugins_path = tools" in (REPO / ".dvc" / "config").read_text()


def test_a_stage_refuses_a_badly_typed_params_yaml_in_one_line(tmp_path, monkeypatch) -> None:
    cfg = composed()
    cfg.finetune.epochs = "three"
    (tmp_path / "params.yaml").write_text(OmegaConf.to_yaml(cfg))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PipelineError, match=r"params.yaml.*`finetune.epochs`") as caught:
        _load_dvc_config("mrpc")
    assert "\n" not in str(caught.value)


def test_a_stage_reads_its_task_spec_typed(tmp_path, monkeypatch) -> None:
    (tmp_path / "params.yaml").write_text(composed_yaml())
    monkeypatch.chdir(tmp_path)
    cfg = _load_dvc_config("stsb")
    assert cfg.task.name == "stsb" and cfg.task.is_regression is True
    assert cfg.ablate.mode == "uniform" and f"{cfg.ablate.mode}" == "uniform"


@pytest.mark.parametrize("experiment", group_options("experiment"))
def test_every_profile_fine_tunes_its_primary_seed(experiment: str) -> None:
    cfg = composed(f"experiment={experiment}")
    assert cfg.seed in cfg.seeds


def test_the_standard_profile_has_three_seeds_and_larger_samples_than_quick() -> None:
    quick = composed("experiment=quick")
    standard = composed("experiment=standard")
    assert (list(quick.seeds), list(standard.seeds)) == ([42], [42, 43, 44])
    assert standard.model.name == quick.model.name and standard.tasks == quick.tasks
    for group, key in [("prepare", "max_train_rows"), ("ablate", "importance_examples")]:
        assert standard[group][key] > quick[group][key], f"{group}.{key}"
    # the sweeps and the gates score every dev row (null: no limit), quick a sample
    assert quick.prepare.max_eval_rows is not None and quick.ablate.num_examples is not None
    assert standard.prepare.max_eval_rows is None and standard.ablate.num_examples is None
    assert "num_examples" not in standard.gates  # the gates read the ablate stage's rows


def test_the_quick_profile_ablates_every_mrpc_dev_row_and_a_sample_of_the_others() -> None:
    from pipeline.analyses.ablate.settings import AblateConfig
    from pipeline.core.schema import typed

    ablate = typed(AblateConfig, composed("experiment=quick").ablate)
    assert ablate.rows("mrpc") is None  # every dev row: room for the removal claims' gate
    assert ablate.rows("sst2") == ablate.num_examples == 96


def _has_offline_train_split(task: str, glue: Path) -> bool:
    spec = OmegaConf.load(CONF_DIR / "task" / f"{task}.yaml")
    return (glue / spec.local.folder / spec.local.files.train).exists()


def test_the_full_profile_fine_tunes_every_offline_task_on_all_its_rows(shared_data) -> None:
    full = composed("experiment=full")
    glue = shared_data / "glue_data"
    offline = {t for t in group_options("task") if _has_offline_train_split(t, glue)}
    assert set(full.tasks) == offline and len(full.tasks) == len(offline)
    assert full.prepare.max_train_rows is None and full.prepare.max_eval_rows is None
    assert (full.finetune.epochs, list(full.seeds)) == (3, [42, 43, 44])  # the paper's epochs


def schema_fields(schema: type, prefix: str = "") -> Iterator[tuple[str, Field]]:
    """Every field of `schema` by dotted key, through nested dataclasses and the dataclasses
    held in its lists and dicts (`[]` and `{}` stand for an item)."""
    hints = get_type_hints(schema)
    for field in fields(schema):
        key = f"{prefix}{field.name}"
        yield key, field
        for inner, suffix in _held_dataclasses(hints[field.name]):
            yield from schema_fields(inner, f"{key}{suffix}.")


def _held_dataclasses(hint: Any) -> Iterator[tuple[type, str]]:
    if is_dataclass(hint):
        yield hint, ""
        return
    origin, args = get_origin(hint), get_args(hint)
    if origin is dict and is_dataclass(args[1]):
        yield args[1], "{}"
    elif origin is list and is_dataclass(args[0]):
        yield args[0], "[]"
    else:  # Optional[...]
        for arg in args:
            if arg is not type(None):
                yield from _held_dataclasses(arg)


def schema_default(field: Field) -> bool:
    """True if the schema gives `field` a value: a default other than MISSING, or a factory
    other than a nested dataclass (which only gives the shape)."""
    if field.default is not dataclasses.MISSING:
        return field.default != MISSING
    factory = field.default_factory
    return factory is not dataclasses.MISSING and not is_dataclass(factory)


def test_every_setting_takes_its_value_from_conf_alone() -> None:
    """Each setting's value lives in conf/ and its type in its schema dataclass (the composed
    schema, pipeline/core/config_schema.py), with no second default there: a default in the
    schema would be a value that editing it may silently not change (conf/ overrides it) or
    that conf/ silently lacks."""
    keys = [key for key, _ in schema_fields(config_schema.Config)]
    assert {"seed", "ablate.mode", "analyze.token_types{}.pos", "prepare.min_rows{}.train"} <= set(
        keys
    )
    defaulted = [key for key, field in schema_fields(config_schema.Config) if schema_default(field)]
    assert defaulted == [], f"settings with a default in the schema (move it to conf/): {defaulted}"


@pytest.mark.parametrize(
    "override",
    [f"experiment={name}" for name in group_options("experiment")]
    + [f"model={name}" for name in group_options("model")]
    + [f"task={name}" for name in group_options("task")],
)
def test_every_composition_gives_every_setting_a_value(override: str) -> None:
    """With no default in the schema, each profile, model and task file must give every key
    its value: none is left missing (`???`)."""
    cfg = OmegaConf.create(composed_yaml(override))
    assert OmegaConf.missing_keys(cfg) == set(), override


def test_params_yaml_equals_default_composition():
    assert (REPO / "params.yaml").read_text() == composed_yaml()


def _compose_each(experiments: list[str | None]) -> None:
    """Each profile of `experiments` (None: the default one) with every task, and with every
    model (model files do not depend on the task, so the full product would only repeat
    compositions)."""
    with initialize_config_dir(str(CONF_DIR), version_base=None):
        for experiment in experiments:
            pairs = [("model", m) for m in group_options("model")]
            pairs += [("task", t) for t in group_options("task")]
            for group, option in pairs:
                profile = [f"experiment={experiment}"] if experiment else []
                cfg = compose(config_name="config", overrides=[*profile, f"{group}={option}"])
                OmegaConf.resolve(cfg)
                assert cfg[group].name == option  # the command line wins over the profile
                assert set(cfg.tasks) <= set(group_options("task"))


def test_every_profile_composes_and_every_model_and_task_under_the_default_one():
    """Each profile alone, and each model and task file under the default profile: every
    config file composes once (about a tenth of the product below)."""
    with initialize_config_dir(str(CONF_DIR), version_base=None):
        for experiment in group_options("experiment"):
            OmegaConf.resolve(compose(config_name="config", overrides=[f"experiment={experiment}"]))
    _compose_each([None])


@pytest.mark.slow  # some 110 compositions: about 50 s
def test_configs_compose_for_every_model_task_experiment():
    _compose_each(group_options("experiment"))


def test_paper_profile_has_the_papers_settings():
    cfg = composed("experiment=paper")
    assert cfg.model.name_or_path == "bert-base-uncased"
    assert sorted(cfg.tasks) == sorted(["mrpc", "stsb", "sst2", "qqp", "rte", "qnli", "mnli"])
    assert (cfg.finetune.batch_size, cfg.finetune.epochs, cfg.shared.max_length) == (32, 3, 128)
    assert (cfg.finetune.learning_rate, cfg.finetune.warmup_ratio, cfg.seed) == (5e-5, 0.1, 42)


def test_unknown_task_and_model_list_valid_names():
    with pytest.raises(PipelineError, match=r"unknown task 'sst3'; valid tasks: cola, mnli"):
        load_task("sst3")
    with pytest.raises(
        PipelineError, match=r"unknown model 'bert_huge'; valid models: .*minilm_l6"
    ):
        check_overrides(["model=bert_huge"])
    with pytest.raises(PipelineError, match="unknown task 'nope'"):
        check_overrides(["-m", "task=sst2,nope"])
    check_overrides(["task=choice(sst2,rte)", "model=tiny_random", "finetune.epochs=1"])


def test_the_schema_rejects_an_unknown_prepare_source():
    node = OmegaConf.create({"source": "ftp", "max_train_rows": None, "max_eval_rows": None})
    with pytest.raises(ValidationError, match=r"Invalid value 'ftp'[\s\S]*full_key: source"):
        typed(PrepareConfig, node)


def test_libraries_receive_typed_settings_never_a_config_node() -> None:
    """Only the stage runner (`pipeline/core/stage.py`) holds the composed config node and
    hands each package its group as a dataclass (`StageRun.settings`); no other module under
    `pipeline/` names `DictConfig`, but the override checks (`pipeline/core/overrides.py`),
    which walk the schema's own node, never a composed config, the config's reading and
    typing (`pipeline/core/run_config.py`), and the inputs of a Hydra job
    (`pipeline/core/input_keys.py`, `pipeline/core/job_inputs.py`), which read the settings the
    runner's config holds."""
    import ast

    naming = []
    allowed = {
        REPO / "pipeline" / "core" / name
        for name in ("stage.py", "overrides.py", "input_keys.py", "job_inputs.py", "run_config.py")
    }
    for path in sorted((REPO / "pipeline").rglob("*.py")):
        if path in allowed:
            continue
        names = {n.id for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Name)}
        imported = {
            alias.name
            for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, ast.ImportFrom)
            for alias in n.names
        }
        if "DictConfig" in names | imported:
            naming.append(str(path.relative_to(REPO)))
    assert naming == [], f"modules that take a raw config node (give them a dataclass): {naming}"
