#!/usr/bin/env bash
# The simulator and the predictor beside real GPU-sharing measurements
# (data/real-contention, provenance in its README): the figures of the
# real-contention section of docs/fidelity.md.
#   [SHARING=mps|green-context|full] scripts/real-contention.sh [OUT_DIR]
# 1. profiles every zoo model on the simulated a100-40gb (Gpulet's GPU is
#    compute capability 8.0) and trains a predictor on them, skipping what
#    OUT_DIR already holds;
# 2. `tally real-contention`: one row per real measurement with the
#    simulator's and the predictor's figure (OUT_DIR/real_contention.csv),
#    each set's MAPE, Pearson r and best-constant MAPE (printed and in
#    OUT_DIR/summary.csv);
# 3. one parity plot per set (OUT_DIR/figures).
# No network; about a minute on two cores after the build.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/real-contention}
cargo build --release -q -p tally-cli
tally=target/release/tally
mkdir -p "$out/zoo"
data=()
for model in $($tally models --format csv | tail -n +2 | cut -d, -f1); do
  dir="$out/zoo/${model/:/-}"
  [ -f "$dir/run.json" ] || $tally profile --model "$model" --gpu a100-40gb --out "$dir" --force --quiet
  data+=(--data "$dir")
done
[ -f "$out/zoo/model.json" ] || $tally train "${data[@]}" --out "$out/zoo/model.json" > /dev/null
echo "== tally real-contention (predictor trained on $(( ${#data[@]} / 2 )) simulated zoo datasets)"
$tally real-contention --predictor "$out/zoo/model.json" --out "$out" --force \
  --sharing "${SHARING:-mps}"
$tally plot "$out" -o "$out/figures" > /dev/null
echo "wrote $out/real_contention.csv, $out/summary.csv, $out/figures"
