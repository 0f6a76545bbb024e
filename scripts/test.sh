#!/usr/bin/env bash
# The whole test suite: formatting, lints, and every test of every crate.
# Everything builds in the release profile, so the dependencies (polars
# above all) are compiled once and shared with the README's main command.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy"
cargo clippy --workspace --all-targets --release -- -D warnings

echo "== cargo test"
# --workspace also builds the `tally` binary the end-to-end tests run.
cargo test --workspace --release
