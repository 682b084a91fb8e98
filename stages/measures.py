"""measures: attention received by [CLS], [SEP], punctuation and other tokens per layer under
raw weights, value-weighted norms (Kobayashi et al. 2020) and rollout (Abnar and Zuidema 2020).

Runs once per (task, seed) of `tasks` x `seeds`. Reads outputs/models/<task>/seed<seed>/ and a
sample (seeded by the primary `seed`) of `measures.num_examples` rows of the task's dev split;
writes outputs/plots/measures/<task>/seed<seed>/received.csv (task, measure, layer,
token_type, received, ci_low, ci_high) and examples.csv, the figure
outputs/figures/measures/<task>/seed<seed>/received_by_type.png, and
outputs/metrics/measures/<task>/seed<seed>.json (`sep.norms.L6` = share received by [SEP] in
layer 6 under norms). Layers are numbered from 1.
The analysis is pipeline.extensions.measure_comparison.
"""

from __future__ import annotations

from pipeline.core.stage import StageRun, stage_main
from pipeline.data.glue import read_split
from pipeline.extensions.measure_comparison import compare_measures
from pipeline.extensions.measure_comparison_figures import measures_figures
from pipeline.models.loading import load_finetuned, load_tokenizer


def run(stage: StageRun) -> None:
    cfg, task = stage.cfg, stage.task
    result = compare_measures(
        load_finetuned(stage.model_folder, stage.device),
        load_tokenizer(stage.settings("model")),
        task,
        read_split(stage.data(), task.name, task.eval_split),
        stage.settings("measures"),
        max_length=cfg.shared.max_length,
        seed=cfg.seed,
    )
    stage.write_outputs(
        "measures",
        task.name,
        stage.seed_folder,
        tables={"received": result.received, "examples": result.examples},
        figures=measures_figures(result, task.name),
        metrics=result.metrics,
        config={"model": cfg.model.name, "seed": stage.seed},
    )


if __name__ == "__main__":
    stage_main(run)
