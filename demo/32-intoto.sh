#!/usr/bin/env bash
# Step 32: the stamped decision as a signed in-toto Statement, and a verdict as a SLSA VSA.
# Exports the accepted bundle of step 30 as a DSSE envelope (predicate decision/v1), verifies
# the bundle again and signs the verdict as a Verification Summary Attestation (VSA v1), then
# checks the envelope with `verify dsse --bundle`. Writes $DEMO_DIR/intoto/.
set -euo pipefail
stamp="$DEMO_DIR/stamp"
work="$DEMO_DIR/intoto"
rm -rf "$work"
mkdir -p "$work"
cd "$work"

key="$DEMO_DIR/publish/keys/demo-k1.key"   # the key step 30 stamped with
[[ -f "$key" ]] || key="$stamp/keys/demo-k1.key"
pinned="$(tr -d '\n' <"${key%.key}.pub")"
bundle="$stamp/bundles/accepted.bundle.json"

echo "-- export the accepted decision as an in-toto Statement in a DSSE envelope"
affidavit export intoto "$bundle" --key "$key" --out accepted.intoto.json

echo "-- verify the bundle and sign the verdict as a SLSA VSA (PASSED or FAILED alike)"
affidavit verify bundle "$bundle" --public-key-base64 "$pinned" \
  --attest-result "$key" --out accepted.vsa.json >/dev/null
python3 - <<'PY'
import base64, json
statement = json.loads(base64.b64decode(json.load(open("accepted.vsa.json"))["payload"]))
p = statement["predicate"]
print(f"   {statement['predicateType']}: {p['verificationResult']} {p['verifiedLevels']}"
      f" for {p['resourceUri']} at {p['timeVerified']}")
PY

echo "-- check the envelope: signature under the key, Statement rebuilt from the bundle"
affidavit verify dsse accepted.intoto.json --public-key-base64 "$pinned" --bundle "$bundle"
