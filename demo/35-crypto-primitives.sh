#!/usr/bin/env bash
# Crypto primitives: a fresh publisher key (0600), then offline checks that any log's users can run:
# a C2SP checkpoint against a trusted verifier key, a tampered copy failing, and a Merkle inclusion
# proof. Uses only $VECTORS_DIR/crypto (TEST-ONLY vectors) and writes into $DEMO_DIR/crypto.
set -euo pipefail
work="$DEMO_DIR/crypto"
vectors="$VECTORS_DIR/crypto"
mkdir -p "$work"

echo "-- affidavit keys generate (private key 0600, refuses to overwrite)"
affidavit keys generate --dir "$work/keys" --publisher-id demo-crypto --key-id demo-crypto-1
ls -l "$work/keys" | sed 's/^/   /'
if affidavit keys generate --dir "$work/keys" --publisher-id demo-crypto --key-id demo-crypto-1 \
  2>"$work/overwrite.err"; then
  echo "unexpected: overwrite allowed" >&2
  exit 1
fi
echo "   second run refused: $(cat "$work/overwrite.err")"

vkey="$(cat "$vectors/log.vkey")"
echo "-- affidavit verify checkpoint (trusted key: $vkey)"
affidavit verify checkpoint "$vectors/checkpoint-cosigned.txt" --vkey "$vkey"

echo "-- the same checkpoint with its tree size changed from 7 to 8"
sed 's/^7$/8/' "$vectors/checkpoint-cosigned.txt" >"$work/checkpoint-tampered.txt"
status=0
affidavit verify checkpoint "$work/checkpoint-tampered.txt" --vkey "$vkey" || status=$?
echo "   exit code $status (1 = not verified)"
test "$status" -eq 1

echo "-- affidavit verify inclusion (leaf 3 of the 7-leaf tree in the checkpoint)"
mapfile -t args < <(python - "$vectors/inclusion-valid.json" <<'PY'
import json, sys
case = json.load(open(sys.argv[1]))
print("--leaf-hash"); print(case["leaf_hash"]); print("--index"); print(case["index"])
print("--size"); print(case["size"]); print("--root"); print(case["root"])
for item in case["proof"]:
    print("--proof"); print(item)
PY
)
affidavit verify inclusion "${args[@]}"
