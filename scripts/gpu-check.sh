#!/usr/bin/env bash
# GPU validation, for a machine with an NVIDIA GPU (compute capability
# 8.0-9.0, a driver for CUDA 13): every kernel of the library run as the
# original and as each transformed variant (sliced, PTB, preemptive PTB,
# preemptive PTB retreated and resumed) on the same seeded inputs, outputs
# compared byte for byte; then the preemption latency of a long preemptive
# GEMM. Prints one table; exits 1 if any variant's outputs differ. Then the
# CUDA backend pieces: device listing, green-context partitions, the
# device's derived spec, and (when ncu is installed) real counters of the
# library kernels imported with `tally import-ncu`; datasets go to
# $TALLY_GPU_CHECK_OUT (default target/gpu-check).
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

# ---- CUDA backend pieces (device discovery, green contexts, ncu import) ----
# What exists of the CUDA profiling path, checked on the real device. The
# CUDA measurement backend itself (`tally profile --backend cuda`) is not
# implemented, so a zoo model cannot be profiled on the device; the
# real-vs-simulated pair slowdowns printed are those of a DRAM-streaming
# copy probe on two green contexts, and real standalone counters come from
# ncu. Fits in ~5 minutes: ncu profiles at most 20 launches.
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
if command -v ncu > /dev/null; then
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
