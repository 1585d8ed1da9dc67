#!/usr/bin/env bash
# Step 30: stamp ProofPack bundles and verify them offline.
# A log, three adapter outputs run through the contract's validator and an AcceptancePolicy
# (accepted, review, rejected), stamped under one signed tree head; verified offline with the pinned
# key; then one bundle is tampered with and the failing step is shown.
# Uses the publisher key of step 20 ($DEMO_DIR/publish/keys/demo-k1.key) when present, else makes
# one. Writes $DEMO_DIR/stamp/ (log.db, bundles/*.bundle.json).
set -euo pipefail
work="$DEMO_DIR/stamp"
rm -rf "$work"
mkdir -p "$work/outputs" "$work/bundles"
cd "$work"

if [[ -f "$DEMO_DIR/publish/keys/demo-k1.key" ]]; then
  keydir="$DEMO_DIR/publish/keys"
  key="$keydir/demo-k1.key"
  echo "-- using the publisher key of step 20: $key"
else
  keydir="$work/keys"
  affidavit keys generate --dir "$keydir" --publisher-id demo --key-id demo-k1 >/dev/null
  key="$keydir/demo-k1.key"
  echo "-- generated a demo key: $key"
fi
pinned="$(tr -d '\n' <"$keydir/demo-k1.pub")"
echo "   pinned public key: $pinned"

echo "-- a log, a boolean AdapterContract and an AcceptancePolicy"
affidavit log init log.db --key "$key" --log-id demo.affidavit.example/stamp
python - <<'PY'
import json
from affidavit.attest.stamp import example_contract
json.dump(example_contract(), open("contract.json", "w"), indent=2)
policy = {
    "rules": [
        {"conditions": [{"field": "signal_a", "op": "==", "value": True},
                        {"field": "signal_b", "op": "==", "value": True}], "action": "auto_accept"},
        {"conditions": [{"field": "signal_a", "op": "==", "value": False}], "action": "auto_reject"},
    ],
    "default": "require_review",
}
json.dump(policy, open("policy.json", "w"))
for name, raw in {"accepted": (True, True), "review": (True, False), "rejected": (False, True)}.items():
    json.dump({"signal_a": raw[0], "signal_b": raw[1]}, open(f"outputs/{name}.json", "w"))
PY
echo "   policy: $(cat policy.json)"

echo "-- stamp the three outputs under one signed tree head"
affidavit stamp batch --contract contract.json --policy policy.json --log log.db --key "$key" \
  --out-dir bundles --deal-prefix demo- outputs/accepted.json outputs/review.json outputs/rejected.json

echo "-- verify offline with the pinned key (no network)"
affidavit verify bundle bundles --public-key-base64 "$pinned"

echo "-- without a trusted key the same bundles are only 'unanchored' (exit 1)"
if affidavit verify bundle bundles/accepted.bundle.json >/dev/null; then
  echo "   unexpected: verified without a key" && exit 1
else
  echo "   exit $? as expected"
fi

echo "-- tamper: turn the rejected decision into an acceptance and repair every hash"
python - <<'PY'
import json
from affidavit.verify.bundles.verifier import bundle_hash
from affidavit.verify.bundles.events import event_hash
bundle = json.load(open("bundles/rejected.bundle.json"))
bundle["events"][-1]["payload"]["decision"] = "auto_accept"
previous = ""
for event in bundle["events"]:
    event["prev_hash"] = previous
    event["hash"] = previous = event_hash(event)
bundle["bundle_hash"] = bundle_hash(bundle)
json.dump(bundle, open("tampered.bundle.json", "w"), indent=2)
PY
if affidavit verify bundle tampered.bundle.json --public-key-base64 "$pinned"; then
  echo "   unexpected: the tampered bundle verified" && exit 1
else
  echo "   rejected (exit $?): the proven log leaf no longer matches any event of the bundle"
fi
