#!/usr/bin/env bash
# The whole test suite: formatting, lints, and every test of every crate.
# Everything builds in the release profile, so the dependencies (polars
# above all) are compiled once and shared with the README's main command.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== CUDA compiler tools (NVRTC, ptxas; no GPU needed)"
# The PTX and kernel-library tests run the real tools; tally finds them in
# target/cuda-tools, and env.sh points anything else (ptxas on PATH) there.
scripts/install-cuda-tools.sh
# shellcheck source=/dev/null
source target/cuda-tools/env.sh

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy"
cargo clippy --workspace --all-targets --release -- -D warnings

echo "== cargo test"
# The end-to-end tests (tests/) run the `tally` binary, which `cargo test`
# does not build for another package: build it first.
cargo build --release -p tally-cli
cargo test --workspace --release

echo "== notebooks"
# Executes notebooks/*.ipynb headless with the tally just built.
scripts/notebooks.sh
