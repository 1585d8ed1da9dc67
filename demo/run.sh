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
registry_data="$DEMO_DIR/registry/data"
if [ -f "$registry_data/registry.db" ]; then
  vkey="$(affidavit log vkey "$registry_data/registry.db")"
  pin="$(python -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$vkey")"
  echo "   the demo registry's explorer (its log key pinned in the link), once it runs again with"
  echo "     affidavit registry serve --data-dir '$registry_data' --port 8080"
  echo "   is http://127.0.0.1:8080/?vkey=$pin"
fi
