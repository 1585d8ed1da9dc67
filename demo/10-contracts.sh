#!/usr/bin/env bash
# Step 10: author an AdapterContract (docs/formats.md §2, seed 003): scaffold, lint, bump, diff.
# Uses only `affidavit` and $DEMO_DIR; leaves $DEMO_DIR/contracts/adapter_contract.json (0.2.0)
# and $DEMO_DIR/contracts/adapter_contract.v0.1.0.json for later steps.
set -euo pipefail
dir="$DEMO_DIR/contracts"
mkdir -p "$dir"
contract="$dir/adapter_contract.json"

echo "-- scaffold acme.eval_suite.v0 0.1.0 (fields signal_a,signal_b,signal_c)"
affidavit adapter scaffold --id acme.eval_suite.v0 --version 0.1.0 \
  --fields signal_a,signal_b,signal_c --out "$dir" --force
cp "$contract" "$dir/adapter_contract.v0.1.0.json"

echo "-- lint (schema, allowed ⊆ output, both hashes recomputed, known validator)"
affidavit adapter lint "$contract"

echo "-- scaffold again without --force is refused (exit 2), the file is kept"
if affidavit adapter scaffold --id acme.eval_suite.v0 --out "$dir" 2>"$dir/refused.txt"; then
  echo "unexpected: overwrite was allowed"; exit 1
fi
cat "$dir/refused.txt"

echo "-- bump to 0.2.0 (atomic rewrite, hashes recomputed); bumping down is refused"
affidavit adapter bump "$contract" --version 0.2.0
if affidavit adapter bump "$contract" --version 0.1.0 2>"$dir/refused.txt"; then
  echo "unexpected: downgrade was allowed"; exit 1
fi
cat "$dir/refused.txt"

echo "-- diff 0.1.0 -> 0.2.0 (exit 1: they differ)"
affidavit adapter diff "$dir/adapter_contract.v0.1.0.json" "$contract" || true

echo "-- hashes (recomputed by lint)"
for f in "$dir/adapter_contract.v0.1.0.json" "$contract"; do
  echo "$(basename "$f"):"
  affidavit adapter lint "$f" | grep '_hash'
done
