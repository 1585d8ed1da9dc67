#!/usr/bin/env bash
# The registry: start it in the background on a free port with a temp data dir, probe
# it, publish a contract, stamp a bundle into the registry's own transparency log, verify it with
# the key discovered from the registry and then pinned, record and walk facts through the API, and
# stop the registry (a trap stops it whatever happens). Needs nothing from earlier steps; writes
# into $DEMO_DIR/registry.
set -euo pipefail
source "$(dirname "$0")/_registry.sh"
work="$DEMO_DIR/registry"
mkdir -p "$work"
cd "$work"
data="$work/data"

url="$(free_url)"
export AFFIDAVIT_REGISTRY_URL="$url"

echo "-- affidavit registry keys create: API keys, shown once, stored as SHA-256 digests"
publish_key="$(affidavit registry keys create --scope publish --publisher demo --label demo --data-dir "$data")"
writer_key="$(affidavit registry keys create --scope facts:write --data-dir "$data" 2>/dev/null)"
team_key="$(affidavit registry keys create --scope facts:read:team --data-dir "$data" 2>/dev/null)"

echo "-- affidavit registry serve on $url (background; stopped by a trap)"
serve_registry "$work" "$data" "$url"
echo "-- affidavit registry probe (the node probe every client runs first)"
affidavit registry probe

echo "-- GET /protocol/adapter-contracts: the five built-in example contracts"
python - "$url" <<'PY'
import sys, httpx
for c in httpx.get(sys.argv[1] + "/protocol/adapter-contracts").json()["contracts"]:
    print(f"   {c['adapter_id']}@{c['adapter_version']}  {c['status']}  {c['distribution_channel']}")
PY

echo "-- affidavit registry publish: lint, attest, sign, log; idempotent on the same bytes"
affidavit adapter scaffold --id demo.registry_eval.v0 --version 0.1.0 --validator boolean \
  --fields tests_passed,lint_clean --out . --force >/dev/null
mv adapter_contract.json contract.json
AFFIDAVIT_API_KEY="$publish_key" affidavit registry publish contract.json
AFFIDAVIT_API_KEY="$publish_key" affidavit registry publish contract.json

echo "-- the signed manifest verifies with the key the registry publishes (fetched explicitly)"
python - "$url" <<'PY'
import sys
from affidavit.registry.clients.registry import fetch_manifest, fetch_public_key
from affidavit.verify.contracts.manifest import verify_manifest
key = fetch_public_key(sys.argv[1])
report = verify_manifest(fetch_manifest(sys.argv[1]), public_key=key)
print(f"   manifest ok={report.ok} entries={report.entry_count} signature={report.manifest_signature_status}")
open("pinned_registry_key.b64", "w").write(key.b64 + "\n")
PY
echo "   pinned the key in pinned_registry_key.b64: $(cat pinned_registry_key.b64)"

echo "-- affidavit stamp: a bundle whose finality leaf goes into the registry's own log"
cat > output.json <<'JSON'
{"tests_passed": true, "lint_clean": true}
JSON
cat > policy.json <<'JSON'
{"rules": [{"conditions": [{"field": "tests_passed", "op": "==", "value": true},
                           {"field": "lint_clean", "op": "==", "value": true}],
            "action": "auto_accept"}],
 "default": "require_review"}
JSON
affidavit stamp --contract contract.json --adapter-output output.json --policy policy.json \
  --deal-id demo-registry-1 --log "$data/registry.db" --key "$data/keys/registry-1.key" \
  --out bundle.json --force >/dev/null
echo "   bundle.json written; the registry now reports:"
python - "$url" <<'PY'
import sys, httpx
head = httpx.get(sys.argv[1] + "/protocol/merkle/latest").json()
print(f"   tree_size={head['tree_size']} root={head['root_hash'][:16]}...")
PY

echo "-- affidavit verify bundle, offline, with the pinned key"
affidavit verify bundle bundle.json --public-key-base64 "$(cat pinned_registry_key.b64)"

echo "-- affidavit lookup: what the registry's log holds about the bundle's deal id, proven with the pinned key"
deal="$(printf %s demo-registry-1 | python -c 'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())')"
affidavit lookup "$url" "$deal" --public-key-base64 "$(cat pinned_registry_key.b64)"

echo "-- PUT /v1/facts: a decision fact derived from the bundle, and a hidden company fact"
python - "$url" "$writer_key" "$team_key" <<'PY'
import json, sys
from affidavit.registry.clients.registry import RegistryClient
from affidavit.verify.lineage.facts import parse_fact
url, writer, reader = sys.argv[1:4]
bundle_hash = json.load(open("bundle.json"))["bundle_hash"]
base = {"relation": "decision:outcome", "source": "urn:affidavit:demo", "confidence": 1,
        "ts": "2025-06-01T12:00:00Z"}
secret = dict(base, entity="urn:deal:demo-registry-1:pricing", scope="company",
              value={"type": "text", "v": "internal margin note"})
evidence = dict(base, entity="urn:bundle:" + bundle_hash, scope="team",
                value={"type": "text", "v": "verified"})
decision = dict(base, entity="urn:deal:demo-registry-1", scope="team",
                value={"type": "text", "v": "auto_accept"},
                derived_from=[parse_fact(evidence).hash, parse_fact(secret).hash])
with RegistryClient(url, api_key=writer) as client:
    print("   stored:", client.put_facts([secret, evidence, decision])["added"])
with RegistryClient(url, api_key=reader) as client:
    walk = client.provenance(parse_fact(decision).hash)
print("-- GET /v1/facts/{id}/provenance as a team reader: the company fact looks absent")
for node in walk["nodes"]:
    label = f"{node['entity']} = {node['value']['v']}" if node["exists"] else "(absent or not readable)"
    print(f"   {node.get('id') or node['hash']}  {label}")
PY

echo "-- affidavit registry publish without a registry URL: process mode exits non-zero"
set +e
AFFIDAVIT_REGISTRY_URL="" affidavit registry publish contract.json
echo "   exit code $? (expected 2)"
set -e
echo "-- stopping the registry (SIGTERM: graceful)"
