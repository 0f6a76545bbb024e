#!/usr/bin/env bash
# Regenerate the figures under docs/ with the tally built here:
# a BERT-base profile's pair-slowdown heatmap and the HP latency CDF of a
# policy comparison (both small simulated runs, seeded, so reruns match).
set -euo pipefail
cd "$(dirname "$0")/.."
tally="${TALLY:-target/release/tally}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$tally" profile --model bert-base --pairs 400 --quiet --out "$work/bert" >/dev/null
"$tally" plot "$work/bert" -o "$work/bert-plots" >/dev/null
"$tally" run --hp bert-base:infer --be resnet50:train --compare all --predictor oracle \
    --load 0.5 --duration 500ms --out "$work/run" >/dev/null
"$tally" plot "$work/run" -o "$work/run-plots" >/dev/null

mkdir -p docs
cp "$work/bert-plots/pair-slowdown-heatmap.png" docs/pair-slowdown-heatmap.png
cp "$work/run-plots/hp-latency-cdf.png" docs/hp-latency-cdf.png
echo "docs/pair-slowdown-heatmap.png"
echo "docs/hp-latency-cdf.png"
