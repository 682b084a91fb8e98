"""The registry of analysis packages (pipeline/analyses/): a toy analysis written into a
temporary folder alone appears in the generated dvc.yaml, params.yaml, defaults list,
report sections and claims table; a declaration error fails in one line naming the package
and the fix; and the defaults list of conf/config.yaml is the generated one.
"""

from __future__ import annotations

import json

import pytest

from pipeline.analyses.defaults_list import config_path, render
from tests.support.toy_analysis import run_scanned, write_toy, write_values

GENERATED = """
import json, shutil, sys
from pathlib import Path
import yaml
from pipeline.analyses.defaults_list import render
from pipeline.analyses.toy import claims as toy
from pipeline.claims.cases import verdict_of
from pipeline.claims.claim import Scope
from pipeline.claims.evaluate import declared_claims, evaluate
from pipeline.claims.outputs import StageOutputs
from pipeline.core.config import CONF_DIR
from pipeline.dag.dvc_yaml import render as dvc_yaml
from pipeline.report.html import SECTIONS
from tools.params import compose_params

conf = Path(sys.argv[1]) / "composed_conf"  # the project's conf/ with the toy's group in it
shutil.copytree(CONF_DIR, conf)
shutil.copytree(Path(sys.argv[1]) / "analyses" / "conf" / "toy", conf / "toy")
config = render((conf / "config.yaml").read_text())
(conf / "config.yaml").write_text(config)
outputs = Path(sys.argv[1]) / "outputs"  # what the toy stage writes for (sst2, seed 42)
(outputs / "metrics/toy/sst2").mkdir(parents=True)
written = {"scaled_labels": 6, "scaled_labels_ci_low": 5, "scaled_labels_ci_high": 7}
(outputs / "metrics/toy/sst2/seed42.json").write_text(json.dumps(written))
found = [c for c in declared_claims(Scope(("sst2",))) if c.name.startswith("extension.toy")]
table, _ = evaluate(found, StageOutputs(outputs), [42])
print(json.dumps({
    "dvc": yaml.safe_load(dvc_yaml())["stages"],
    "params": yaml.safe_load(compose_params(conf_dir=conf)),
    "defaults": yaml.safe_load(config)["defaults"],
    "sections": list(SECTIONS),
    "claims": dict(zip(table["claim"], table["verdict"])),
    "cases": [verdict_of(case) for case in toy.cases()],
}))
"""


def test_the_defaults_list_of_conf_config_yaml_is_generated() -> None:
    """After adding or removing an analysis's group: `python -m pipeline.analyses.defaults_list`."""
    committed = config_path().read_text()
    assert committed == render(committed), (
        "conf/config.yaml's defaults list is stale; regenerate it with "
        "`python -m pipeline.analyses.defaults_list`"
    )


def test_a_toy_analysis_in_a_folder_of_its_own_reaches_every_generated_file(tmp_path) -> None:
    write_toy(tmp_path / "analyses")
    write_values(tmp_path / "analyses")
    ran = run_scanned(tmp_path / "analyses", GENERATED.replace("sys.argv[1]", repr(str(tmp_path))))
    assert ran.returncode == 0, ran.stderr[-3000:]
    found = json.loads(ran.stdout)

    stages = list(found["dvc"])
    assert (
        found["dvc"]["toy"]["cmd"] == "python -m stages.toy --dvc ${item.task} --seed ${item.seed}"
    )
    assert found["dvc"]["toy"]["params"] == ["toy"]
    assert (
        "outputs/metrics/ablate/${item.task}/seed${item.seed}.json" in found["dvc"]["toy"]["deps"]
    )
    assert stages.index("ablate") < stages.index("toy") < stages.index("report")
    assert found["params"]["toy"] == {"scale": 3}
    assert {"toy": "default"} in found["defaults"]
    assert found["defaults"][-1] == {"experiment": "quick"}  # a profile still overrides it
    assert found["sections"][:3] == ["claims", "toy", "across_models"]
    assert found["claims"] == {"extension.toy_labels.sst2": "supported"}  # 6 [5, 7] > 0
    assert found["cases"] == ["supported"]


@pytest.mark.parametrize(
    ("toy", "values", "message"),
    [
        (
            {"group": "ablate"},
            None,
            "analyses ablate and toy both own config group `ablate`; a group has one owner",
        ),
        (
            {"stage": "toys"},
            "toy",
            "analysis toy declares stage `toys`; a stage is named as its package: rename",
        ),
        ({}, None, "analysis toy: its config group `toy` has no toy/default.yaml in"),
        (
            {"reads": "ablation"},
            "toy",
            "analysis toy reads stage `ablation`, which no analysis declares; declare it or fix",
        ),
    ],
)
def test_a_declaration_error_fails_in_one_line_naming_the_package(
    tmp_path, toy: dict, values: str | None, message: str
) -> None:
    write_toy(tmp_path, **toy)
    if values:
        write_values(tmp_path, values)
    ran = run_scanned(tmp_path, "import pipeline.core.config_schema, pipeline.dag.declarations")
    assert ran.returncode != 0
    last = ran.stderr.strip().splitlines()[-1]
    assert message in last, ran.stderr[-2000:]
