"""measures: attention received by [CLS], [SEP], punctuation and other tokens per layer under
raw weights, value-weighted norms (Kobayashi et al. 2020) and rollout (Abnar and Zuidema 2020).

Runs once per (task, seed) of `tasks` x `seeds`. Reads outputs/models/<task>/seed<seed>/ and a
sample (seeded by the primary `seed`) of `measures.num_examples` rows of the task's dev split;
writes outputs/plots/measures/<task>/seed<seed>/received.csv (task, measure, layer,
token_type, received, ci_low, ci_high) and examples.csv, the figure
outputs/figures/measures/<task>/seed<seed>/received_by_type.png, and
outputs/metrics/measures/<task>/seed<seed>.json (`sep.norms.L6` = share received by [SEP] in
layer 6 under norms). Layers are numbered from 1.
The analysis is pipeline.attention.measures.
"""

from __future__ import annotations

from pipeline.attention.figures import measures_figures
from pipeline.attention.measures import MeasuresSettings, compare_measures
from pipeline.core.config import TaskSpec
from pipeline.core.io import save_figure, write_json, write_table
from pipeline.core.stage import StageRun, stage_main
from pipeline.data.glue import read_split
from pipeline.models.loading import load_finetuned, load_tokenizer, pick_device


def run(stage: StageRun) -> None:
    cfg = stage.cfg
    task = TaskSpec.from_config(cfg.task)
    model = load_finetuned(stage.upstream("models", task.name, stage.seed_folder)).to(
        pick_device(cfg.device)
    )
    result = compare_measures(
        model,
        load_tokenizer(cfg.model),
        task,
        read_split(stage.data(), task.name, task.eval_split),
        MeasuresSettings.from_config(cfg.measures),
        max_length=cfg.shared.max_length,
        seed=cfg.seed,
    )

    plots = stage.out("plots", "measures", task.name, stage.seed_folder)
    write_table(plots / "received.csv", result.received)
    write_table(plots / "examples.csv", result.examples)
    figures = stage.out("figures", "measures", task.name, stage.seed_folder)
    for name, drawn in measures_figures(result, task.name).items():
        config = {"model": cfg.model.name, "seed": stage.seed, **drawn.config}
        save_figure(figures / f"{name}.png", drawn.figure, drawn.caption, config)
    write_json(
        stage.out("metrics", "measures", task.name, f"{stage.seed_folder}.json"), result.metrics
    )


if __name__ == "__main__":
    stage_main(run)
