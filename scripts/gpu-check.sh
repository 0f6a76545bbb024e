#!/usr/bin/env bash
# GPU validation, for a machine with an NVIDIA GPU (compute capability
# 8.0-9.0, a driver for CUDA 13): every kernel of the library run as the
# original and as each transformed variant (sliced, PTB, preemptive PTB,
# preemptive PTB retreated and resumed) on the same seeded inputs, outputs
# compared byte for byte; then the preemption latency of a long preemptive
# GEMM. Prints one table; exits 1 if any variant's outputs differ. Then the
# CUDA backend: device listing, green-context partitions, bert-base profiled
# on the device (`tally profile --backend cuda`) beside the simulator with
# the device's own spec (`tally compare`: standalone durations and pair
# slowdowns side by side), and (when ncu is installed) real counters of the
# library kernels imported with `tally import-ncu`; exits 1 if profiling
# fails. Datasets go to $TALLY_GPU_CHECK_OUT (default target/gpu-check).
#   scripts/gpu-check.sh [DEVICE]
set -euo pipefail
cd "$(dirname "$0")/.."
device=${1:-0}
scripts/install-cuda-tools.sh > /dev/null
cargo build --release -q -p tally-cli
if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv || true
fi
echo "== kernel library: original vs variants (tally kernels verify)"
target/release/tally kernels verify --device "$device"

# ---- CUDA backend (device discovery, green contexts, profiling, ncu) ----
# Fits in ~5 minutes: the profile is 11 kernels on 4 partition sizes and 8
# pairs at 3 splits, 2 + 10 launches per measurement; with ncu, 11 kernels
# on one partition size each under ncu, and an import of at most 20
# launches.
out=${TALLY_GPU_CHECK_OUT:-target/gpu-check}
mkdir -p "$out"
echo "== devices (tally gpus --backend cuda)"
target/release/tally gpus --backend cuda
echo "== green contexts: SMs as reported, a copy timed on each, the pair real vs simulated"
for split in 32,32 16,48; do
  target/release/tally gpus --backend cuda --try-split "$split" || echo "split $split: FAILED"
done
echo "== the device's own spec (--gpu auto) driving the simulator"
target/release/tally profile --model profiler/examples-models/tiny-mlp.toml --gpu auto \
  --pairs 6 --quiet --force --out "$out/sim-auto"
echo "== tally profile --backend cuda: bert-base on the device, beside the simulator"
status=0
common=(--model bert-base --device "$device" --gpu auto --sm-counts 32,64,132 --pairs 8 --quiet --force)
if timeout 300 target/release/tally profile --backend cuda --warmup 2 --reps 10 "${common[@]}" \
    --out "$out/cuda-bert"; then
  target/release/tally profile --backend sim --noise 0 "${common[@]}" --out "$out/sim-bert"
  echo "-- a = simulated, b = measured on the device"
  target/release/tally compare "$out/sim-bert" "$out/cuda-bert"
else
  echo "tally profile --backend cuda: FAILED"
  status=1
fi
if command -v ncu > /dev/null; then
  echo "== tally profile --backend cuda --counters ncu: every counter, bert-base on 64 SMs"
  if timeout 240 target/release/tally profile --backend cuda --counters ncu --device "$device" \
      --gpu auto --model bert-base --sm-counts 64 --splits 0.5 --pairs 1 --warmup 2 --reps 5 \
      --quiet --force --out "$out/cuda-bert-ncu"; then
    head -c 600 "$out/cuda-bert-ncu/standalone.csv"; echo
  else
    echo "tally profile --counters ncu: FAILED (counter access may need root or NVreg_RestrictProfilingToAdminUsers=0)"
    status=1
  fi
  echo "== ncu: library kernels profiled on the device, imported as a dataset"
  if timeout 240 ncu --csv --page raw --print-units base --launch-count 20 \
      --metrics "$(target/release/tally import-ncu --print-metrics)" \
      target/release/tally kernels verify --device "$device" > "$out/ncu.csv"; then
    target/release/tally import-ncu "$out/ncu.csv" --gpu auto --force --out "$out/ncu-import"
    echo "-- real standalone durations (us) by kernel and SM count"
    python3 - "$out/ncu-import" <<'PY' || true
import csv, sys, os
d = sys.argv[1]
names = {r["op_id"]: r["name"] for r in csv.DictReader(open(os.path.join(d, "ops.csv")))}
for r in csv.DictReader(open(os.path.join(d, "standalone.csv"))):
    print(f'{names[r["op_id"]][:48]:48} {r["sm_count"]:>4} SMs {float(r["duration_us"]):10.2f} us')
PY
  else
    echo "ncu failed (counter access may need root or NVreg_RestrictProfilingToAdminUsers=0): see $out/ncu.csv"
  fi
else
  echo "== ncu not found: skipping the ncu import check"
fi
echo "datasets in $out"
exit "$status"
