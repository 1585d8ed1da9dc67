#!/usr/bin/env bash
# Every benchmark, each printing a table with ratios measured in the same run. Not part of make test.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
for bench in "$here"/bench_*.py; do
  echo "== $(basename "$bench" .py)"
  python "$bench" "$@"
  echo
done
