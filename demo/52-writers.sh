#!/usr/bin/env bash
# Step 52: many writers, one log (docs/transparency.md "Writing to the log"). A registry in the
# background; two writers on "other machines" (their own folders, no log file, no log key: an
# API key with scope log:write) stamp bundles into its log at the same time; the registry
# sequences their leaves, integrates them in batches and signs one checkpoint per batch; every
# bundle carries its inclusion proof and the registry's signed tree head, and verifies offline
# with the registry's pinned key exactly like a bundle stamped into a local log. Then log append
# through the registry: the same entry again keeps its first index. Writes $DEMO_DIR/writers.
set -euo pipefail
source "$(dirname "$0")/_registry.sh"
work="$DEMO_DIR/writers"
rm -rf "$work"
mkdir -p "$work/writer-a" "$work/writer-b"
cd "$work"
data="$work/data"

url="$(free_url)"

echo "-- affidavit registry keys create --scope log:write (one key per writer)"
key_a="$(affidavit registry keys create --scope log:write --label writer-a --data-dir "$data" 2>/dev/null)"
key_b="$(affidavit registry keys create --scope log:write --label writer-b --data-dir "$data" 2>/dev/null)"

echo "-- affidavit registry serve on $url (background; stopped by a trap)"
serve_registry "$work" "$data" "$url"
pinned="$(python -c 'import sys, httpx; print(httpx.get(sys.argv[1] + "/protocol/merkle/public-key").json()["public_key_base64"])' "$url")"
echo "   the registry's log key, pinned: $pinned"

echo "-- each writer has a contract, a policy and adapter outputs (nothing of the log)"
for writer in writer-a writer-b; do
  python - "$work/$writer" <<'PY'
import json, sys
from pathlib import Path
from affidavit.attest.stamp import example_contract
folder = Path(sys.argv[1])
(folder / "outputs").mkdir()
json.dump(example_contract(), open(folder / "contract.json", "w"))
json.dump({"rules": [{"conditions": [{"field": "signal_a", "op": "==", "value": True}],
                      "action": "auto_accept"}], "default": "require_review"},
          open(folder / "policy.json", "w"))
for i in range(5):
    json.dump({"signal_a": i % 2 == 0, "signal_b": True}, open(folder / f"outputs/deal-{i}.json", "w"))
PY
done

echo "-- both writers stamp at once: affidavit stamp batch --log $url --api-key KEY"
stamp() {  # writer key
  (cd "$work/$1" && affidavit stamp batch --contract contract.json --policy policy.json \
    --log "$url" --api-key "$2" --out-dir bundles --deal-prefix "$1-" outputs/*.json)
}
stamp writer-a "$key_a" >"$work/writer-a.out" &
a=$!
stamp writer-b "$key_b" >"$work/writer-b.out" &
b=$!
wait "$a"
wait "$b"
sed 's/^/   /' "$work/writer-a.out" "$work/writer-b.out"

echo "-- one log: every leaf index once, under checkpoints the registry signed per batch"
python - "$url" "$work" <<'PY'
import json, sys
from pathlib import Path
import httpx
url, work = sys.argv[1], Path(sys.argv[2])
bundles = sorted(work.glob("writer-*/bundles/*.bundle.json"))
indexes = [json.loads(p.read_text())["merkle_inclusion"]["leaf_index"] for p in bundles]
sizes = {json.loads(p.read_text())["signed_tree_head"]["tree_size"] for p in bundles}
assert len(set(indexes)) == len(indexes) == 10, indexes
print(f"   10 bundles, leaves {sorted(indexes)}, signed tree heads of sizes {sorted(sizes)}")
note = httpx.get(url + "/tlog/checkpoint").text
print(f"   GET /tlog/checkpoint: size {note.splitlines()[1]}")
PY

echo "-- affidavit verify bundle, offline, with the pinned key: both writers' bundles"
affidavit verify bundle writer-a/bundles writer-b/bundles --public-key-base64 "$pinned"

echo "-- affidavit log append $url FILE: an entry through the registry; the same one again"
printf 'an artefact digest to log\n' >artefact.txt
show='import json, sys; r = json.load(sys.stdin)["appended"][0]; print("   index", r["index"], "created", r["created"])'
affidavit log append "$url" artefact.txt --api-key "$key_a" --json | python -c "$show"
affidavit log append "$url" artefact.txt --api-key "$key_b" --json | python -c "$show"
echo "   (the second is the same entry: deduplicated, its first index)"

echo "-- a key without log:write is refused before its body is read (one JSON error)"
set +e
publisher="$(affidavit registry keys create --scope facts:write --data-dir "$data" 2>/dev/null)"
affidavit log append "$url" artefact.txt --api-key "$publisher"
echo "   exit code $? (expected 2: registry.remote_error, auth.forbidden from the registry)"
set -e
echo "-- stopping the registry (SIGTERM: what was sequenced is integrated and signed first)"
