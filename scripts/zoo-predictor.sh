#!/usr/bin/env bash
# Train and evaluate the contention predictor on every zoo model profiled on
# one GPU (default h100-sxm), plus the user model file tiny-mlp.toml (not in
# the zoo) as an extra held-out model: the figures quoted in docs/prediction.md.
#   scripts/zoo-predictor.sh [GPU] [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
gpu=${1:-h100-sxm}
out=${2:-runs/zoo-$gpu}
cargo build --release -q -p tally-cli
tally=target/release/tally
data=()
for model in $($tally models --format csv | tail -n +2 | cut -d, -f1) profiler/examples-models/tiny-mlp.toml; do
  name=$(basename "${model/:/-}" .toml)
  dir="$out/$name"
  [ -f "$dir/run.json" ] || $tally profile --model "$model" --gpu "$gpu" --out "$dir" --force --quiet
  data+=(--data "$dir")
done
echo "== tally train ($(( ${#data[@]} / 2 )) datasets)"
/usr/bin/time -f "train wall %e s, max RSS %M kB" \
  $tally train "${data[@]}" --out "$out/model.json"
echo "== tally eval --brief"
$tally eval "${data[@]}" --brief
echo "== few-shot K=10, per held-out model"
$tally eval "${data[@]}" --split fewshot --format csv | awk -F, 'NR==1 || $3==10'
