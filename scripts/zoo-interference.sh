#!/usr/bin/env bash
# Profile every zoo model on one GPU (default h100-sxm) and summarise the
# interference across all their pairs: the slowdown range and the error of
# the Orion-style intensity rule quoted in docs/fidelity.md.
#   scripts/zoo-interference.sh [GPU] [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
gpu=${1:-h100-sxm}
out=${2:-runs/zoo-$gpu}
cargo build --release -q -p tally-cli
tally=target/release/tally
data=()
for model in $($tally models --format csv | tail -n +2 | cut -d, -f1); do
  dir="$out/${model/:/-}"
  $tally profile --model "$model" --gpu "$gpu" --out "$dir" --force --quiet
  data+=(--data "$dir")
done
$tally summary "${data[@]}"
