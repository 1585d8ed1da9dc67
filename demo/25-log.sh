#!/usr/bin/env bash
# Step 25: the transparency log. A log in one SQLite file: init with a fresh key,
# append artefacts (one batch, durable), sign a tree head (docs/formats.md §4) and a C2SP checkpoint
# (§6), prove inclusion and consistency, and check both with the offline verifier commands.
# Standalone: uses only `affidavit` (and the venv's python to build a verifier key string);
# leaves $DEMO_DIR/log/log.db and $DEMO_DIR/log/keys/demo-log.key for anyone who wants a log.
set -euo pipefail
work="$DEMO_DIR/log"
rm -rf "$work"
mkdir -p "$work/items"
db="$work/log.db"

echo "-- a log key (0600) and an empty log"
affidavit keys generate --dir "$work/keys" --publisher-id demo-log --key-id demo-log >/dev/null
affidavit log init "$db" --key "$work/keys/demo-log.key" --log-id demo.affidavit.example/log

echo "-- append five artefacts in one transaction (leaf data = each file's exact bytes)"
for i in 1 2 3 4 5; do printf '{"item": %d, "note": "artefact %d"}\n' "$i" "$i" >"$work/items/$i.json"; done
affidavit log append "$db" "$work"/items/*.json
echo "-- the same document as AiGentsy leaf data (--leaf-form py-compact: strict JSON, sorted, compact)"
affidavit log append "$db" --leaf-form py-compact "$work/items/1.json"

echo "-- a signed tree head over the six committed leaves (key path recorded at init)"
affidavit log head "$db" --json >"$work/sth-6.json"
cat "$work/sth-6.json"

echo "-- a C2SP checkpoint, verified with the log's verifier key"
affidavit log head "$db" --checkpoint >"$work/checkpoint.txt"
cat "$work/checkpoint.txt"
vkey="$(python - "$work/keys/demo-log.pub" <<'PY'
import sys
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.checkpoint import verifier_key_string
key = Ed25519PublicKey.from_b64(open(sys.argv[1]).read().strip())
print(verifier_key_string("demo.affidavit.example/log", key))
PY
)"
affidavit verify checkpoint "$work/checkpoint.txt" --vkey "$vkey"

echo "-- inclusion proof of leaf 2, checked by 'affidavit verify inclusion'"
affidavit log proof "$db" --index 2 --inclusion --json >"$work/prove-2.json"
mapfile -t args < <(python - "$work/prove-2.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["merkle_inclusion"]
for flag, value in [("--leaf-hash", p["leaf_hash"]), ("--index", p["leaf_index"]),
                    ("--size", p["tree_size"]), ("--root", p["merkle_root"])]:
    print(flag); print(value)
for step in p["proof"]:
    print("--proof"); print(step["hash"])
PY
)
affidavit verify inclusion "${args[@]}"

echo "-- two more leaves; the log proves the new head extends the old one (6 -> 8)"
affidavit log append "$db" "$work/items/2.json" "$work/items/3.json" >/dev/null
affidavit log consistency "$db" --from 6

echo "-- asking for a leaf that is not there: one line, exit 2"
status=0
affidavit log proof "$db" --index 99 --inclusion 2>&1 || status=$?
echo "   exit code $status"
test "$status" -eq 2
