"""patterns_round: draw a labelling round that measures the pattern types' shares (not a DVC
stage; pipeline/kovaleva/patterns/design.py has the design).

    python -m tools.patterns_round --model minilm_l6 --out data/share_round/minilm_l6 \
        --total 240 --floor 12 --seed 2030

Freezes the run's pattern classifier (outputs/patterns/cnn.pt) as the stratifier: copied to
OUT/stratifier.pt, named in OUT's files by its SHA-256. Its calls on every map of the run
(outputs/patterns/predictions/seed<seed>.parquet, column `label`) less the maps labelled
before (data/annotations/<model>/sample.csv) are the frame. Plans the size of each call's
stratum (a Neyman allocation for each task's fine-tuned first-three-types and
heterogeneous shares, from the cross-validated labels of outputs/plots/patterns_train/
cross_validation.csv as the planning guess of P(type | call)), draws them at random with the
seed, and writes OUT/sample.csv (sample.csv's columns and `inclusion_probability`; `stratum`
`call:<type>@<digest>`; ids continuing the label folder's), OUT/maps.npz (what annotators
see), OUT/plan.csv (per call: the frame's maps, the maps drawn, the planning guess) and
OUT/half_widths.csv (the planned 95% half-width of each cell's target share), and renders
the maps on sheets of six in outputs/labelling/<model>/share_round/, in the drawn order.
Once labelled (visual.csv in OUT), `python -m tools.merge_round OUT --into
data/annotations/<model>` joins the round to the label folder.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pandas as pd

from pipeline.core import layout
from pipeline.core.errors import PipelineError, exit_on_error
from pipeline.core.io import atomic_path, write_table
from pipeline.kovaleva.patterns import CLASSES, FIRST_THREE
from pipeline.kovaleva.patterns.design import (
    CALL,
    call_counts,
    draw_by_call,
    half_widths,
    plan_sizes,
    planning_guess,
)
from pipeline.kovaleva.patterns.labels import MAPS_FILE, SAMPLE_COLUMNS, SAMPLE_FILE, read_sample
from pipeline.kovaleva.patterns.maps import open_stores
from pipeline.kovaleva.patterns.mapsets import write_map_set
from pipeline.kovaleva.patterns.sample import ORIGIN, unsampled, with_maps
from pipeline.kovaleva.patterns.sheets import render_sheets
from pipeline.models.zip_parts import sha256_of

TARGETS = {"first_three": list(FIRST_THREE), "heterogeneous": ["heterogeneous"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="the run's model.name, e.g. minilm_l6")
    parser.add_argument("--out", type=Path, required=True, help="the round's folder (new)")
    parser.add_argument("--total", type=int, required=True, help="maps to draw")
    parser.add_argument("--floor", type=int, default=12, help="least maps per stratum")
    parser.add_argument("--seed", type=int, required=True, help="seeds the draw")
    parser.add_argument("--run-seed", type=int, default=42, help="the run's fine-tuning seed")
    parser.add_argument("--outputs", type=Path, default=Path("outputs"))
    parser.add_argument("--data", type=Path, default=Path("data"))
    args = parser.parse_args(argv)
    with exit_on_error():
        if args.out.exists():
            raise PipelineError(f"{args.out} exists; a round is drawn once: choose a new --out")
        classifier = layout.pattern_classifier(args.outputs)
        digest = sha256_of(classifier)
        predictions = pd.read_parquet(args.outputs / "patterns" / "predictions" /
                                      f"seed{args.run_seed}.parquet")  # fmt: skip
        predictions[CALL] = predictions["label"]  # the classifier to be frozen calls the maps
        labelled = read_sample(args.data / "annotations" / args.model / SAMPLE_FILE)
        frame = unsampled(
            predictions.assign(layer=predictions["layer"] - 1, head=predictions["head"] - 1),
            labelled,
        )
        counts = call_counts(frame)
        weights = counts.xs("finetuned", level="variant")
        weights = weights.div(weights.sum(axis=1), axis=0)
        cv = pd.read_csv(args.outputs / "plots" / "patterns_train" / "cross_validation.csv")
        guess = planning_guess(cv["cnn"], cv["visual"])
        capacity = counts.sum().to_dict()
        sizes = plan_sizes(weights, guess, TARGETS, args.total, args.floor, capacity)
        chosen = draw_by_call(frame, sizes, args.seed)
        chosen = chosen.assign(stratum="call:" + chosen[CALL] + "@" + digest[:12])
        stores = open_stores(args.outputs / "attention", sorted(set(chosen["task"])),
                             args.model, args.run_seed)  # fmt: skip
        rows, maps = with_maps(stores, chosen[[*ORIGIN, "length", "rule", "stratum"]], labelled)
        rows["inclusion_probability"] = chosen["inclusion_probability"].to_numpy()
        plan = pd.DataFrame(
            {
                "call": list(CLASSES),
                "frame_maps": [int(capacity[c]) for c in CLASSES],
                "drawn": [sizes[c] for c in CLASSES],
                **{f"guess_{t}": guess.loc[list(CLASSES), t].round(4).to_list() for t in CLASSES},
            }
        )
        widths = half_widths(weights, guess, sizes, TARGETS).round(4).reset_index()
        args.out.mkdir(parents=True)
        with atomic_path(args.out / "stratifier.pt") as tmp:
            shutil.copyfile(classifier, tmp)
        write_table(args.out / SAMPLE_FILE, rows[[*SAMPLE_COLUMNS, "inclusion_probability"]])
        write_map_set(args.out / MAPS_FILE, maps)
        write_table(args.out / "plan.csv", plan)
        write_table(args.out / "half_widths.csv", widths)
        sheets = render_sheets(maps, args.outputs / "labelling" / args.model / "share_round")
    print(
        f"{len(rows)} maps ({sizes}) -> {args.out}; stratifier sha256 {digest}; {len(sheets)} "
        f"sheets in {sheets[0].parent}; planned half-widths at most "
        f"{widths[list(TARGETS)].max().max():.3f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
