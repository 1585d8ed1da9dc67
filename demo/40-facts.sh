#!/usr/bin/env bash
# Step 40: facts derived from a stamped decision, their lineage walked and drawn, a tampered fact
# caught by the audit (docs/formats.md §5).
# Uses `affidavit` and $DEMO_DIR. Reads the bundle_hash of $DEMO_DIR/bundles/*.json when an earlier
# step left a bundle there; otherwise a fixed stand-in hash. Writes into $DEMO_DIR/facts.
set -euo pipefail
work="$DEMO_DIR/facts"
mkdir -p "$work"
cd "$work"

bundle_hash="00000000000000000000000000000000000000000000000000000000000000b1"  # stand-in
for bundle in "$DEMO_DIR"/bundles/*.json; do
  [ -f "$bundle" ] || continue
  found="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("bundle_hash",""))' "$bundle")"
  if [[ "$found" =~ ^[a-f0-9]{64}$ ]]; then bundle_hash="$found"; fi
  break
done
echo "-- the decision: bundle $bundle_hash"

fact() {  # fact NAME RELATION VALUE-JSON SCOPE [PARENT...]
  local entity="$1" relation="$2" value="$3" scope="$4"
  shift 4
  local parents=""
  for p in "$@"; do parents="${parents:+$parents,}\"$p\""; done
  printf '{"entity":"urn:demo:deal:%s","relation":"%s","value":%s,"source":"urn:affidavit:bundle:%s","scope":"%s","confidence":1,"ts":"2026-01-01T00:00:00Z"%s}\n' \
    "$entity" "$relation" "$value" "$bundle_hash" "$scope" "${parents:+,\"derived_from\":[$parents]}"
}

fact decision affidavit:decision '{"type":"text","v":"auto_accept"}' team > decision.json
decision="$(affidavit facts hash decision.json)"
fact payout affidavit:payout '{"type":"number","v":250}' team "$decision" > payout.json
payout="$(affidavit facts hash payout.json)"
fact ledger affidavit:internal_note '{"type":"text","v":"margin <b>12%</b>"}' company "$decision" > note.json
note="$(affidavit facts hash note.json)"
fact report affidavit:summary '{"type":"text","v":"paid 250 after auto_accept"}' team "$payout" "$note" > report.json
report="$(affidavit facts hash report.json)"
cat decision.json payout.json note.json report.json > facts.jsonl
affidavit facts add --store facts.db facts.jsonl
echo "-- the same batch again is a no-op:"
affidavit facts add --json --store facts.db facts.jsonl > again.json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["added"]), "added,", len(d["existing"]), "already stored")' again.json
echo "-- re-recording the decision as derived from the report is refused (derived_from is immutable):"
fact decision affidavit:decision '{"type":"text","v":"auto_accept"}' team "$report" > cyclic.json
if affidavit facts add --store facts.db cyclic.json; then echo "change accepted?!"; exit 1; else echo "(refused, exit $?)"; fi

echo "-- lineage of the report (text):"
affidavit facts walk "$report" --store facts.db --format text
echo "-- as a team reader, the company-scope note looks exactly like an absent fact:"
affidavit facts walk "$report" --store facts.db --readable-scopes team,public --format text
affidavit facts walk "$report" --store facts.db --format html > lineage.html
affidavit facts walk "$report" --store facts.db --format svg > lineage.svg
echo "wrote $work/lineage.html and lineage.svg"

echo "-- audit of an export, then of a tampered copy (the payout edited from 250 to 2500):"
affidavit facts export --store facts.db > export.jsonl
affidavit facts audit --store export.jsonl
sed 's/"v":250}/"v":2500}/' export.jsonl > tampered.jsonl
if affidavit facts audit --store tampered.jsonl; then echo "tampering missed?!"; exit 1; else echo "(audit exit $?)"; fi
