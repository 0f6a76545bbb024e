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
# The end-to-end tests (tests/) run the `tally` binary, which `cargo test`
# does not build for another package: build it first.
cargo build --release -p tally-cli
cargo test --workspace --release
