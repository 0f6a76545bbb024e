#!/usr/bin/env bash
# The published Tally table, simulated: the 12 HP/BE pairs of the Tally
# artifact (ASPLOS'25, measured on an A100-40GB; data/tally-bench-a100/)
# on a100-40gb, HP at load 0.5, under time-slicing, mps, mps-priority, tgs,
# tally and tally-predict; then `tally side-by-side` writes
# OUT/side_by_side.csv (simulated beside published) and prints the
# per-policy means and errors.
#   scripts/tally-table.sh [OUT_DIR]
# Arrivals: `--arrival-process fixed-count`, as the artifact built its
# server traces (tally-bench bench_utils/trace.py: exactly
# floor(300 s / latency x 0.5) requests, a random subset of one day's
# invocations compressed into the run; here at uniform times, the day's
# shape not being public): a Poisson count over a short run strays from
# the load. Durations: BERT_DURATION (default 30s: 3,300-4,300 BERT
# requests of 3.5 ms per pair, six of TGS's 5 s HP rate samples) and
# LLAMA_DURATION (default 120s: 16-37 Llama-2 generation requests of
# 1.6 s, 38 alone; the artifact's 300 s runs hold 76, and at 60 s the
# backlog a run ends with weighs twice as much in the HP throughput).
# tally-predict uses the
# predictor trained on the zoo profiled on a100-40gb
# (scripts/zoo-predictor.sh makes it when missing; PREDICTOR=FILE or
# PREDICTOR=oracle overrides it; TALLY=BINARY runs a given tally binary).
# The BE jobs run as the artifact trained them (python/configs/
# train_config.py: `amp: False` for every job), in FP32 (`NAME:train-fp32`:
# matmuls on FFMA, convolutions in TF32), and its job keyed
# whisper-large-v3 as the whisper-small its script loads;
# PRECISION=amp runs them in mixed precision instead (docs/fidelity.md).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/tally-table}
gpu=a100-40gb
case ${PRECISION:-fp32} in
  amp) train=train ;;
  fp32) train=train-fp32 ;;
  *) echo "PRECISION must be amp or fp32" >&2; exit 2 ;;
esac
# The artifact's PyTorch is built without cuDNN (tally-bench
# docker/Dockerfile.base: USE_CUDNN=0), so its convolutions are per-sample
# im2col + cuBLAS GEMMs (`-nocudnn`); CUDNN=1 runs them as cuDNN would.
case ${CUDNN:-0} in
  0) train=$train-nocudnn ;;
  1) ;;
  *) echo "CUDNN must be 0 or 1" >&2; exit 2 ;;
esac
# Every job of the artifact ran with REPLACE_CUBLAS and the Tally client
# preloaded, the local client under MPS, time-slicing and for the alone
# baseline (tally-bench bench.py, scripts/start_client_local.sh), so its
# GEMMs, the HP servers' included, are the Tally client's CUTLASS kernels
# (`-cutlass`, profiler GemmLibrary docs); GEMMS=cublas runs cuBLAS's own.
case ${GEMMS:-cutlass} in
  cutlass) gemms=-cutlass ;;
  cublas) gemms= ;;
  *) echo "GEMMS must be cutlass or cublas" >&2; exit 2 ;;
esac
train=$train$gemms
tally=${TALLY:-target/release/tally}
[ -n "${TALLY:-}" ] || cargo build --release -q -p tally-cli
predictor=${PREDICTOR:-runs/zoo-$gpu/model.json}
if [ "$predictor" != oracle ] && [ ! -f "$predictor" ]; then
  scripts/zoo-predictor.sh "$gpu" "runs/zoo-$gpu" > /dev/null
fi
hps=(bert-large:infer$gemms@1 llama2-7b:infer$gemms)
bes=(whisper-small:$train@16 resnet50:$train@128 pointnet:$train
     pegasus-x-base:$train gpt2-large:$train bert-base-squad:$train@32)
# Each BE job's GPU utilisation alone, as the artifact measured it
# (single-job-perf.csv: nvidia-smi's utilisation, percent), in that order.
keys=(pytorch_whisper-large-v3_train_16 pytorch_resnet50_train_128
      pytorch_pointnet_train_128 pytorch_pegasus-x-base_train_4
      pytorch_gpt2-large_train_1 pytorch_bert_train_32)
single=data/tally-bench-a100/single-job-perf.csv
utils=()
for key in "${keys[@]}"; do
  u=$(awk -F, -v k="$key" '$2 == k { printf "%.4f", $6 / 100 }' "$single")
  [ -n "$u" ] || { echo "no GPU utilisation for $key in $single" >&2; exit 2; }
  utils+=("$u")
done
# Both HP servers run GPU-paced (HP_LAUNCH_US, default 0: the host keeps
# ahead of the GPU). The artifact measured each alone back to back
# (single-job-perf.csv, single-stream rows): nvidia-smi's GPU utilisation,
# the share of time a kernel was executing (NVML's definition), is 89 %
# for BERT and 91 % for Llama-2. GPU-paced, our BERT request keeps a kernel
# running 82 % of its time (the rest is the gaps between dependent
# kernels); paced by a host taking 8.1 us per launch (ONNX Runtime's own
# A100 benchmark on another host, microsoft/onnxruntime PR 12670:
# bert-base FP16, batch 1, 1.06 ms at sequence 8 ~ 130 launches x 8.1 us)
# it would keep one running 64 % of its time, which the artifact's 89 %
# rules out for its host. HP_LAUNCH_US=8.1 runs that launch-bound variant.
hp_launch_us=${HP_LAUNCH_US:-0}
policies=time-slicing,mps,mps-priority,tgs,tally,tally-predict
mkdir -p "$out/pairs"
start=$(date +%s)
dirs=()
for hp in "${hps[@]}"; do
  case $hp in
    llama*) duration=${LLAMA_DURATION:-120s} ;;
    *) duration=${BERT_DURATION:-30s} ;;
  esac
  for i in "${!bes[@]}"; do
    be=${bes[$i]}
    dir="$out/pairs/${hp%%[:@]*}--${be%%[:@]*}"
    echo "== $hp + $be (GPU utilisation alone ${utils[$i]}; $duration)" >&2
    "$tally" run --hp "$hp" --be "$be" --be-gpu-util "${utils[$i]}" \
      --hp-launch-us "$hp_launch_us" \
      --compare "$policies" --predictor "$predictor" \
      --load 0.5 --arrival-process fixed-count --duration "$duration" --seed 1 --gpu "$gpu" --out "$dir" --force > /dev/null
    dirs+=("$dir")
  done
done
echo "== 12 pairs x 6 policies in $(( $(date +%s) - start )) s" >&2
"$tally" side-by-side "${dirs[@]}" --out "$out/side_by_side.csv"
