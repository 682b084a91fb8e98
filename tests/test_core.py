"""The shared core: a killed writer's temporaries go away with the next write; stage timings
stay out of the metrics files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from pipeline.core.config import CONF_DIR
from pipeline.core.io import write_json
from pipeline.core.schema import AblateConfig, DisableMode, TaskConfig, load_task, typed
from pipeline.core.stage import StageRun
from tests.builders import composed

REPO = Path(__file__).resolve().parent.parent


def test_the_next_write_removes_what_a_killed_writer_left(tmp_path: Path) -> None:
    target = tmp_path / "sst2.parquet"
    writer = textwrap.dedent(
        f"""
        import time
        from pipeline.core.io import atomic_path
        with atomic_path({str(target)!r}) as tmp:
            tmp.write_bytes(b"half")
            print("writing", flush=True)
            time.sleep(60)
        """
    )
    process = subprocess.Popen(
        [sys.executable, "-c", writer], stdout=subprocess.PIPE, text=True, cwd=REPO
    )
    assert process.stdout.readline().strip() == "writing"
    os.kill(process.pid, signal.SIGKILL)  # kill -9: no cleanup runs
    process.wait()
    leftovers = list(tmp_path.glob(".sst2.parquet.*.tmp"))
    assert leftovers and not target.exists()

    (tmp_path / ".other.json.abc.tmp").write_text("{}")  # another file's temporary stays
    write_json(target, {"done": True})
    assert json.loads(target.read_text()) == {"done": True}
    assert not list(tmp_path.glob(".sst2.parquet.*.tmp"))
    assert (tmp_path / ".other.json.abc.tmp").exists()


def test_a_stage_writes_its_time_to_timings_not_metrics(tmp_path: Path) -> None:
    cfg = composed()
    cfg.paths.outputs = str(tmp_path / "outputs")
    (tmp_path / "params.yaml").write_text(OmegaConf.to_yaml(cfg))
    stage = tmp_path / "stages" / "tiny_stage.py"
    stage.parent.mkdir()
    (stage.parent / "__init__.py").write_text("")
    stage.write_text(
        textwrap.dedent(
            """
            from pipeline.core.io import write_json
            from pipeline.core.stage import stage_main

            def run(stage):
                write_json(stage.out("metrics", "tiny.json"), {"value": 1})

            if __name__ == "__main__":
                stage_main(run)
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"}
    subprocess.run(
        [sys.executable, "-m", "stages.tiny_stage", "--dvc", "rte"],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
    )
    assert json.loads((tmp_path / "outputs/metrics/tiny.json").read_text()) == {"value": 1}
    timing = json.loads((tmp_path / "outputs/timings/tiny_stage/rte.json").read_text())
    assert timing["stage"] == "tiny_stage" and timing["seconds"] >= 0


def test_a_group_reaches_its_package_as_its_schema_dataclass(tmp_path) -> None:
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=["task=rte"])
    stage = StageRun(cfg, out_root=tmp_path, under_dvc=False)
    settings = stage.settings("ablate")
    assert isinstance(settings, AblateConfig) and settings.mode is DisableMode.uniform
    assert isinstance(stage.task, TaskConfig) and stage.task.num_labels == 2
    untyped = OmegaConf.create({"ablate": OmegaConf.to_container(cfg.ablate)})
    assert StageRun(untyped, out_root=tmp_path, under_dvc=True).settings("ablate") == settings
    assert typed(TaskConfig, OmegaConf.load(CONF_DIR / "task" / "rte.yaml")) == load_task("rte")
