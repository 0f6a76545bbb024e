#!/usr/bin/env bash
# The 12-pair co-location matrix of the Tally evaluation, simulated on
# a100-40gb: HP bert-base:infer and llama2-7b-decode:infer, each a Poisson
# stream at load 0.5, against each of six BE training jobs, under every
# policy. Writes every summary row to OUT_DIR/matrix.csv and the per-policy
# means to OUT_DIR/means.csv, and prints the means.
#   scripts/colocation-matrix.sh [DURATION] [OUT_DIR]
# tally-predict uses the predictor trained on the zoo profiled on a100-40gb
# (scripts/zoo-predictor.sh makes it when missing; PREDICTOR=FILE or
# PREDICTOR=oracle overrides it; TALLY=BINARY runs a given tally binary).
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10s}
out=${2:-runs/matrix}
gpu=a100-40gb
tally=${TALLY:-target/release/tally}
[ -n "${TALLY:-}" ] || cargo build --release -q -p tally-cli
predictor=${PREDICTOR:-runs/zoo-$gpu/model.json}
if [ "$predictor" != oracle ] && [ ! -f "$predictor" ]; then
  scripts/zoo-predictor.sh "$gpu" "runs/zoo-$gpu" > /dev/null
fi
hps=(bert-base:infer llama2-7b-decode:infer)
bes=(resnet50:train bert-base:train mobilenetv2:train vit-b16:train gpt2:train
     profiler/examples-models/mlp-train.toml)
mkdir -p "$out"
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
header=
for hp in "${hps[@]}"; do
  for be in "${bes[@]}"; do
    pair="$out/pairs/${hp%%:*}--$(basename "${be%%:*}" .toml)"
    echo "== $hp + $be" >&2
    "$tally" run --hp "$hp" --be "$be" --compare all --predictor "$predictor" \
      --load 0.5 --duration "$duration" --seed 1 --gpu "$gpu" --out "$pair" --force > /dev/null
    header=$(head -1 "$pair/summary.csv")
    tail -n +2 "$pair/summary.csv" >> "$rows"
  done
done
{ echo "$header"; cat "$rows"; } > "$out/matrix.csv.tmp"
mv "$out/matrix.csv.tmp" "$out/matrix.csv"
# Per-policy means over the pairs (and the p99 overhead's range, and the
# pairs where HP falls behind its arrivals: HP throughput below 0.99), and
# each policy's system throughput relative to tgs's.
awk -F, '
  NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  {
    p = $col["policy"]; o = $col["p99_overhead_pct"]
    if (!(p in n)) { order[++np] = p; lo[p] = o; hi[p] = o }
    n[p]++; ovh[p] += o; sys[p] += $col["system_throughput"]; be[p] += $col["be_throughput"]
    if (o < lo[p]) lo[p] = o
    if (o > hi[p]) hi[p] = o
    if ($col["hp_throughput"] < 0.99) sat[p]++
  }
  END {
    print "policy,pairs,mean_p99_overhead_pct,min_p99_overhead_pct,max_p99_overhead_pct,hp_saturated_pairs,mean_be_throughput,mean_system_throughput,system_vs_tgs"
    for (k = 1; k <= np; k++) {
      p = order[k]
      rel = ("tgs" in sys && sys["tgs"] > 0) ? (sys[p] / n[p]) / (sys["tgs"] / n["tgs"]) : 0
      printf "%s,%d,%.2f,%.2f,%.2f,%d,%.3f,%.3f,%.3f\n", p, n[p], ovh[p] / n[p], lo[p], hi[p], sat[p], be[p] / n[p], sys[p] / n[p], rel
    }
  }' "$out/matrix.csv" > "$out/means.csv.tmp"
mv "$out/means.csv.tmp" "$out/means.csv"
column -s, -t < "$out/means.csv"
