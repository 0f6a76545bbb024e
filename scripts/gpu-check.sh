#!/usr/bin/env bash
# GPU validation, for a machine with an NVIDIA GPU (compute capability
# 8.0-9.0, a driver for CUDA 13): every kernel of the library run as the
# original and as each transformed variant (sliced, PTB, preemptive PTB,
# preemptive PTB retreated and resumed) on the same seeded inputs, outputs
# compared byte for byte; then the preemption latency of a long preemptive
# GEMM. Prints one table; exits 1 if any variant's outputs differ.
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
