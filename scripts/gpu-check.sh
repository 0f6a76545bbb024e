#!/usr/bin/env bash
# The checks that need an NVIDIA GPU (compute capability 8.0-9.0, a driver
# for CUDA 13), in sections that all run whatever fails before them, with a
# PASS / FAIL summary at the end (exit 1 if any failed).
#
# First contact (under ~3 minutes, before anything long):
#   devices         tally gpus --backend cuda: driver, CUDA version, SMs,
#                   partition rule and where it came from
#   kernels         tally kernels verify: every library kernel as the
#                   original and each variant (sliced, PTB, preemptive PTB,
#                   preemptive PTB retreated mid-run and resumed: the row
#                   fails unless the kernel stopped part-way), outputs
#                   byte for byte; the sync-aware vote on real barriers;
#                   the preemption latency of a long GEMM
#   green contexts  both sides of a pair from one split, the SMs the driver
#                   reports for each, a copy timed alone and beside the other
#   ncu             (when ncu is installed) one kernel under --counters ncu:
#                   the event-timed duration kept, ncu's own duration and
#                   its launch__sm_count under a green context printed
#   engine contract the real-GPU engine (DeviceEngine over CudaDevice)
#                   through the checks every engine passes: one launch,
#                   slices, a preemptive launch retreated half way and
#                   resumed, a launch that cannot retreat
# tally run on the device (about 4 minutes): bert-base:infer and
# llama2-7b:infer against resnet50:train and bert-base:train under every
# policy the device engine runs (mps, mps-priority, tgs, orion, tally), and
# the same on the simulator with the device's own spec, side by side (p99
# and mean service slowdown, system throughput).
# Longer: bert-base profiled on the device beside the simulator with the
# device's own spec (tally compare), and the library kernels profiled by ncu
# and imported as a dataset.
#
# Tools: the CUDA compiler tools under target/cuda-tools when present (carry
# them to a machine without the package index), else NVRTC and ptxas from a
# CUDA install on PATH, else scripts/install-cuda-tools.sh. Partition sizes
# come from the device. Datasets go to $TALLY_GPU_CHECK_OUT (default
# target/gpu-check).
#   scripts/gpu-check.sh [DEVICE]
set -uo pipefail
cd "$(dirname "$0")/.."
device=${1:-0}
out=${TALLY_GPU_CHECK_OUT:-target/gpu-check}
mkdir -p "$out"
tally=target/release/tally
summary=()

# section NAME COMMAND...: runs it, records PASS / FAIL and the seconds.
section() {
  local name=$1 start=$SECONDS
  shift
  echo "== $name"
  if "$@"; then
    summary+=("PASS  $name ($((SECONDS - start)) s)")
  else
    summary+=("FAIL  $name ($((SECONDS - start)) s)")
  fi
}

# finish: prints the summary and exits 1 if any section failed or was
# skipped for want of a device (nothing that ran on no GPU is a pass).
finish() {
  echo "== summary (datasets in $out)"
  printf '%s\n' "${summary[@]}"
  for line in "${summary[@]}"; do
    [[ $line == FAIL* || $line == SKIP*device* ]] && exit 1
  done
  exit 0
}

tools() {
  if [ -f target/cuda-tools/env.sh ]; then
    echo "CUDA tools: target/cuda-tools ($(cat target/cuda-tools/VERSION 2>/dev/null))"
  elif command -v ptxas > /dev/null && ldconfig -p 2>/dev/null | grep -q libnvrtc; then
    echo "CUDA tools: $(command -v ptxas) and the system NVRTC"
    return 0
  else
    scripts/install-cuda-tools.sh || return 1
  fi
  # shellcheck source=/dev/null
  source target/cuda-tools/env.sh
}

build() {
  cargo build --release -q -p tally-cli
}

section "CUDA compiler tools" tools
section "build" build
if [ ! -x "$tally" ]; then
  finish
fi
if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total,compute_mode --format=csv || true
fi

# The device's SM count and partition step, from its own listing.
sms=0 step=8
devices() {
  "$tally" gpus --backend cuda || return 1
  read -r sms step < <("$tally" gpus --backend cuda --format csv | awk -F, -v d="$device" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["device"] == d { print $col["sms"], $col["partition_step"] }')
  [ "${sms:-0}" -gt 0 ]
}
section "devices" devices
# Every later section sizes its partitions from the device's SM count and
# step: without them (no driver, no device, an unreadable listing) there is
# nothing to size, so they are skipped rather than run on zero SMs.
if ! [[ ${sms:-} =~ ^[1-9][0-9]*$ && ${step:-} =~ ^[1-9][0-9]*$ ]]; then
  summary+=("SKIP  every later section: the devices section listed no device $device")
  finish
fi
# Partition sizes: a quarter, a half and the rest of the device, each
# rounded down to the partition step.
round() { echo $(( $1 / step * step )); }
quarter=$(round $((sms / 4)))
half=$(round $((sms / 2)))
echo "device $device: $sms SMs in steps of $step; partitions $quarter, $half, $sms"

section "kernels (tally kernels verify)" timeout 180 "$tally" kernels verify --device "$device"

green() {
  local ok=0
  for split in "$half,$half" "$quarter,$(round $((sms - quarter)))"; do
    timeout 120 "$tally" gpus --backend cuda --device "$device" --try-split "$split" || ok=1
  done
  return $ok
}
section "green contexts (--try-split)" green

ncu_first_contact() {
  local dir="$out/ncu-first"
  mkdir -p "$dir/tmp"
  TMPDIR="$dir/tmp" timeout 180 "$tally" profile --backend cuda --counters ncu \
    --device "$device" --gpu auto --model profiler/examples-models/tiny-mlp.toml \
    --sm-counts "$half" --splits 0.5 --pairs 1 --warmup 2 --reps 5 --quiet --force \
    --out "$dir/data" || return 1
  echo "-- duration_us is the CUDA-event median; ncu's own duration and SM count per kernel:"
  for f in "$dir"/tmp/tally-ncu-*/*.ncu.csv; do
    [ -f "$f" ] || continue
    echo "$(basename "$f"): $(grep -o 'gpu__time_duration.sum[^,]*' "$f" | head -1)" \
      "launch__sm_count column present: $(grep -c launch__sm_count "$f")"
    awk -F'","' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /launch__sm_count/) c = i }
      NR > 2 && c { gsub(/"/, "", $c); print "   launch__sm_count =", $c, "(partition: '"$half"' SMs)" }' "$f"
  done
}
if command -v ncu > /dev/null; then
  section "ncu under a green context (--counters ncu)" ncu_first_contact
else
  echo "== ncu not found: skipping the ncu sections"
fi

contract() {
  TALLY_GPU_CHECK_DEVICE=$device timeout 240 cargo test --release -q -p tally-gpu-engine \
    --test cuda_contract -- --ignored --nocapture
}
section "engine contract on the device (DeviceEngine over CudaDevice)" contract

# One pair on the device and on the simulator with the device's spec.
run_pair() {
  local hp=$1 be=$2 duration=$3 name=${1%%:*}-${2%%:*}
  local common=(--hp "$hp" --be "$be" --compare mps,mps-priority,tgs,orion,tally
    --load 0.5 --duration "$duration" --device "$device" --gpu auto --force --format csv)
  timeout 150 "$tally" run --backend cuda --warmup 1 --reps 5 "${common[@]}" \
    --out "$out/run-cuda-$name" > /dev/null || return 1
  "$tally" run --backend sim "${common[@]}" --out "$out/run-sim-$name" > /dev/null || return 1
  echo "-- $hp beside $be, $duration each (device | simulator):"
  side_by_side "$out/run-cuda-$name/summary.csv" "$out/run-sim-$name/summary.csv"
}
# side_by_side A B: per policy, the p99 latency over the HP job alone's,
# the p99 service slowdown and the system throughput of two summary.csv.
side_by_side() {
  local cols=policy,hp_p99_ms,alone_p99_ms,service_p99_slowdown,system_throughput
  join -t, <(pick "$cols" "$1" | sort) <(pick "$cols" "$2" | sort) |
    awk -F, 'BEGIN { printf "%-13s %9s %8s %7s | %9s %8s %7s\n", "policy", "p99/alone", "svc_p99", "sys_thr", "p99/alone", "svc_p99", "sys_thr" }
      $1 != "policy" { printf "%-13s %9.3f %8.3f %7.3f | %9.3f %8.3f %7.3f\n", $1, $2 / $3, $4, $5, $6 / $7, $8, $9 }'
}
# pick COLUMNS FILE: those columns of a CSV, by name, in that order.
pick() {
  awk -F, -v want="$1" 'NR == 1 { n = split(want, w, ","); for (i = 1; i <= NF; i++) c[$i] = i }
    { line = ""; for (i = 1; i <= n; i++) line = line (i > 1 ? "," : "") $c[w[i]]; print line }' "$2"
}
run_on_device() {
  local ok=0
  run_pair bert-base:infer resnet50:train 4s || ok=1
  run_pair bert-base:infer bert-base:train 4s || ok=1
  run_pair llama2-7b:infer resnet50:train 8s || ok=1
  run_pair llama2-7b:infer bert-base:train 8s || ok=1
  return $ok
}
section "tally run on the device beside the simulator" run_on_device

# ---- Longer sections ----
bert() {
  local common=(--model bert-base --device "$device" --gpu auto --sm-counts "$quarter,$half,$sms"
    --pairs 8 --quiet --force)
  timeout 300 "$tally" profile --backend cuda --warmup 2 --reps 10 "${common[@]}" \
    --out "$out/cuda-bert" || return 1
  "$tally" profile --backend sim --noise 0 "${common[@]}" --out "$out/sim-bert" || return 1
  echo "-- a = simulated, b = measured on the device"
  "$tally" compare "$out/sim-bert" "$out/cuda-bert"
}
section "bert-base on the device beside the simulator" bert

ncu_import() {
  timeout 240 ncu --csv --page raw --print-units base --launch-count 20 \
    --metrics "$("$tally" import-ncu --print-metrics)" \
    "$tally" kernels verify --device "$device" --under-profiler > "$out/ncu.csv" || return 1
  "$tally" import-ncu "$out/ncu.csv" --gpu auto --force --out "$out/ncu-import"
}
if command -v ncu > /dev/null; then
  section "library kernels under ncu, imported (tally import-ncu)" ncu_import
fi

finish
