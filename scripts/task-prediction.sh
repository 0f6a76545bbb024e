#!/usr/bin/env bash
# Task-level prediction against the simulator, the figures quoted in the
# task-level table of docs/prediction.md:
#   scripts/task-prediction.sh [GPU] [OUT_DIR]
# 1. profiles the zoo models the predictor learns from on GPU (simulated),
#    skipping datasets already there, and trains a predictor on them alone
#    (no user model file: those are the unseen models);
# 2. predicts every pair of zoo inference models at three splits (a quarter,
#    half, three quarters of the GPU), each task profiled on the fly, with
#    the predictor and the scaling and intensity-rule baselines, each
#    against the same composition driven by the simulator's own pair
#    contention (`--versus-sim`); `simulator` is the block-level engine's
#    own timing, for comparison;
# 3. the same for the user model files tiny-mlp and small-cnn (unseen in
#    training) beside each other and two zoo models.
set -euo pipefail
cd "$(dirname "$0")/.."
gpu=${1:-a100-40gb}
out=${2:-runs/tasks-$gpu}
cargo build --release -q -p tally-cli
tally=target/release/tally
mkdir -p "$out"

data=()
for model in resnet50 resnet50:train mobilenetv2 mobilenetv2:train bert-base bert-base:train \
  vit-b16 vit-b16:train gpt2 gpt2:train llama2-7b-prefill llama2-7b-decode; do
  dir="$out/${model/:/-}"
  [ -f "$dir/run.json" ] || $tally profile --model "$model" --gpu "$gpu" --out "$dir" --force --quiet
  data+=(--data "$dir")
done
[ -f "$out/model.json" ] || $tally train "${data[@]}" --out "$out/model.json" > /dev/null

# A quarter, half and three quarters of the GPU, in its partition steps.
case $gpu in
  a100-40gb | a100-80gb) splits=(--sm 28,80 --sm 52,56 --sm 80,28) ;;
  h100-sxm) splits=(--sm 32,96 --sm 64,64 --sm 96,32) ;;
  *) echo "no splits listed for $gpu: add them here" >&2; exit 2 ;;
esac
echo "== $gpu: splits ${splits[*]}"

tasks=()
for model in $($tally models --format csv | awk -F, 'NR > 1 && $2 == "inference" {print $1}'); do
  tasks+=(--task "$model")
done
echo "== every pair of zoo inference models ($(( ${#tasks[@]} / 2 )) tasks)"
/usr/bin/time -f "wall %e s" $tally predict --predictor "$out/model.json" "${tasks[@]}" "${splits[@]}" \
  --methods predictor,scaling,intensity-rule,simulator --versus-sim --format csv > "$out/zoo-tasks.csv"

echo "== user model files (unseen): tiny-mlp, small-cnn, beside each other and bert-base, resnet50"
$tally predict --predictor "$out/model.json" "${splits[@]}" \
  --task profiler/examples-models/tiny-mlp.toml --task profiler/examples-models/small-cnn.json \
  --task bert-base --task resnet50 \
  --methods predictor,scaling,intensity-rule,simulator --versus-sim --format csv > "$out/user-tasks.csv"
