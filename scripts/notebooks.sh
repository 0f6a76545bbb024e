#!/usr/bin/env bash
# Execute every notebook in notebooks/ headless, top to bottom, in a Python
# environment made from the pinned notebooks/requirements.txt (installed
# under target/, like the CUDA tools); fails if any cell fails. First checks
# that the committed notebooks carry no outputs.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== notebooks: committed without outputs"
python3 - notebooks/*.ipynb <<'PY'
import json, sys
bad = []
for path in sys.argv[1:]:
    for i, cell in enumerate(json.load(open(path))["cells"]):
        if cell["cell_type"] == "code" and (cell.get("outputs") or cell.get("execution_count") is not None):
            bad.append(f"{path}: cell {i} has outputs or an execution count")
if bad:
    sys.exit("\n".join(bad) + "\nstrip them: jupyter nbconvert --clear-output --inplace notebooks/*.ipynb")
PY

venv=target/notebook-venv
req=notebooks/requirements.txt
# Reinstalled only when the pins change.
if ! cmp -s "$req" "$venv/requirements.txt" 2>/dev/null; then
    echo "== notebooks: Python environment ($venv)"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
    cp "$req" "$venv/requirements.txt"
fi

# Where cargo put the binary: CARGO_TARGET_DIR when set (relative to here).
target_dir=${CARGO_TARGET_DIR:-target}
case $target_dir in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
export TALLY="${TALLY:-$target_dir/release/tally}"
if [ ! -x "$TALLY" ]; then
    echo "\`$TALLY\` is missing: build it with cargo build --release -p tally-cli" >&2
    exit 2
fi
executed=$(mktemp -d)
trap 'rm -rf "$executed"' EXIT
for nb in notebooks/*.ipynb; do
    echo "== notebooks: executing $nb"
    "$venv/bin/jupyter" nbconvert --to notebook --execute \
        --ExecutePreprocessor.timeout=300 --ExecutePreprocessor.kernel_name=python3 \
        --output-dir "$executed" "$nb"
done
