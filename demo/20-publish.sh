#!/usr/bin/env bash
# Publication and pinning: a publisher key, two attested and signed contracts, a signed
# manifest verified offline with the pinned publisher document, a pin, and the CI gate
# (`adapter pins check`) passing, then failing once a pinned contract is tampered with.
# Uses $VECTORS_DIR/publication/contracts (two AdapterContracts); writes into $DEMO_DIR/publish.
set -euo pipefail
work="$DEMO_DIR/publish"
mkdir -p "$work/contracts"
cp "$VECTORS_DIR/publication/contracts/acme.eval_suite.v0@0.1.0.json" "$work/contracts/eval_suite.json"
cp "$VECTORS_DIR/publication/contracts/acme.other.v0@1.0.0.json" "$work/contracts/other.json"
cd "$work"

echo "-- affidavit keys generate: the publisher's key (0600) and its publisher document"
affidavit keys generate --dir keys --publisher-id demo --key-id demo-k1 \
  --manifest-url https://publisher.example/specs/adapter-contracts.manifest.json >/dev/null
ls -l keys | sed 's/^/   /'

echo "-- affidavit adapter attest --sign-with: lint, then a signed manifest entry per contract"
for name in eval_suite other; do
  affidavit adapter attest "contracts/$name.json" --key keys/demo-k1.key --out "$name.entry.json"
done

echo "-- affidavit adapter manifest build: order, sign entries, hash and sign the manifest"
affidavit adapter manifest build eval_suite.entry.json other.entry.json \
  --key keys/demo-k1.key --out adapter-contracts.manifest.json

echo "-- affidavit adapter manifest verify, with the pinned publisher document (offline)"
affidavit adapter manifest verify adapter-contracts.manifest.json \
  --publisher-doc keys/demo-publisher.json

echo "-- affidavit adapter list"
affidavit adapter list --manifest adapter-contracts.manifest.json

hash="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["contract_hash"])' \
  contracts/eval_suite.json)"
echo "-- affidavit adapter pin acme.eval_suite.v0@0.1.0 against the verified manifest"
affidavit adapter pin --id acme.eval_suite.v0 --version 0.1.0 --hash "$hash" \
  --manifest adapter-contracts.manifest.json --publisher-doc keys/demo-publisher.json

gate=(affidavit adapter pins check --contracts-dir contracts
  --manifest adapter-contracts.manifest.json --publisher-doc keys/demo-publisher.json
  --require-signed)
echo "-- affidavit adapter pins check (the CI gate): passes"
"${gate[@]}"

echo "-- tamper: drop an allowed policy field from the pinned contract, run the gate again"
python3 - contracts/eval_suite.json <<'PY'
import json, sys
path = sys.argv[1]
contract = json.load(open(path))
contract["allowed_policy_fields"] = contract["allowed_policy_fields"][:1]
json.dump(contract, open(path, "w"), indent=2)
PY
set +e
"${gate[@]}"
status=$?
set -e
if [ "$status" -ne 1 ]; then
  echo "unexpected: the gate exited $status on a tampered contract (expected 1)" >&2
  exit 1
fi
echo "   the gate refused the tampered contract (exit $status), as it should"
