#!/usr/bin/env bash
# The main job, end to end, on embedded defaults (SQLite, local key files), in a temp folder.
# Each capability adds one numbered step script; they share $DEMO_DIR and run in order.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export DEMO_DIR="${DEMO_DIR:-$(mktemp -d -t affidavit-demo.XXXXXX)}"
export VECTORS_DIR="$here/../vectors"
echo "== Affidavit demo in $DEMO_DIR (a temp folder; set DEMO_DIR to choose it; kept afterwards)"
for step in "$here"/[0-9][0-9]-*.sh; do
  echo
  echo "== $(basename "$step" .sh)"
  bash "$step"
done
echo
echo "== demo finished: every step ran"
echo "   its files (keys, contracts, bundles, logs, facts, a registry's data) are in $DEMO_DIR"
echo "   look at them there; remove them with: rm -rf '$DEMO_DIR'"
