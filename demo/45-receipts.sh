#!/usr/bin/env bash
# Step 45: transformation receipts (seed 004, RFC 002 §1.4 and §7). A lossy adapter
# (newline_normalize, then whitespace_trim) stores its output with a signed receipt; the receipt
# replays and verifies, one by one and in bulk; a silently altered output is caught (exit 1 and the
# code); the signer refuses to sign an undeclared transformation; the receipt goes into the
# transparency log and the fact store, where the lineage reads content <- transformations <- source.
# Uses `affidavit`, python3 and $DEMO_DIR; writes into $DEMO_DIR/receipts.
set -euo pipefail
work="$DEMO_DIR/receipts"
mkdir -p "$work"
cd "$work"
rm -rf src out facts.db

[ -f keys/demo-adapter.key ] \
  || affidavit keys generate --dir keys --publisher-id demo-adapter --key-id demo-adapter >/dev/null

echo "-- the sources (CRLF line ends, blank lines around): three notes"
mkdir -p src/notes out/notes
for n in 1 2 3; do
  printf '\r\n  note %s: first line\r\nsecond line\r\n\r\n' "$n" > "src/notes/n$n.txt"
done
od -c src/notes/n1.txt | head -3 | sed 's/^/   /'

echo "-- the adapter stores each note with LF line ends, trimmed, and a receipt for it"
for n in 1 2 3; do
  python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); sys.stdout.buffer.write(d.replace(b"\r\n",b"\n").replace(b"\r",b"\n").strip())' \
    "src/notes/n$n.txt" > "out/notes/n$n.txt"
  affidavit receipt make --source "src/notes/n$n.txt" --content "out/notes/n$n.txt" \
    --adapter demo-lossy --adapter-version 1.0.0 \
    --transform newline_normalize --transform whitespace_trim \
    --source-uri "notes/n$n.txt" --key keys/demo-adapter.key --out "out/notes/n$n.txt.receipt.json"
done
python3 -m json.tool out/notes/n1.txt.receipt.json | sed 's/^/   /'

echo "-- verify one receipt: signature, source hash, replay, content hash"
affidavit verify receipt out/notes/n1.txt.receipt.json --source src/notes/n1.txt \
  --content out/notes/n1.txt --trusted-keys keys

echo "-- verify the folder (every *.receipt.json; sources under src/, contents beside them)"
affidavit verify receipt out --source-root src --trusted-keys keys --jobs 2

echo "-- a silently altered output (one word changed after storing) is caught:"
sed -i 's/second/SECOND/' out/notes/n2.txt
if affidavit verify receipt out/notes/n2.txt.receipt.json --source src/notes/n2.txt \
  --content out/notes/n2.txt --trusted-keys keys --json > altered.json; then
  echo "alteration missed?!"
  exit 1
else
  status=$?
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("   exit", sys.argv[2], "verdict", r["verdict"], "code", r["code"])' altered.json "$status"
fi
if affidavit verify receipt out --source-root src --trusted-keys keys; then
  echo "alteration missed in bulk?!"
  exit 1
else
  echo "(bulk exit $?)"
fi

echo "-- an adapter that trims but declares only newline_normalize: the signer refuses"
if affidavit receipt make --source src/notes/n3.txt --content out/notes/n3.txt \
  --adapter demo-lossy --adapter-version 1.0.0 --transform newline_normalize \
  --key keys/demo-adapter.key --out undeclared.receipt.json; then
  echo "signed an undeclared transformation?!"
  exit 1
else
  echo "(refused, exit $?)"
fi

if [ -f "$DEMO_DIR/log/log.db" ]; then
  echo "-- the receipt, as one leaf of the demo transparency log (index, leaf hash, receipt hash):"
  affidavit receipt log out/notes/n1.txt.receipt.json --log "$DEMO_DIR/log/log.db"
fi

echo "-- the receipt as a fact derived from the source's fact; its lineage:"
printf '{"entity":"urn:demo:source:notes/n1.txt","relation":"affidavit:ingested","value":{"type":"text","v":"notes/n1.txt as read"},"source":"file:///notes/n1.txt","scope":"local","confidence":1,"ts":"2026-01-01T00:00:00Z"}\n' > source-fact.json
affidavit facts add --store facts.db source-fact.json >/dev/null
source_fact="$(affidavit facts hash source-fact.json)"
receipt_fact="$(affidavit receipt fact out/notes/n1.txt.receipt.json --source-fact "$source_fact" --store facts.db | awk '{print $NF}')"
affidavit facts walk "$receipt_fact" --store facts.db --format text
echo "-- audit with the receipts folder, then with the receipt altered:"
affidavit facts audit --store facts.db --receipts out
cp out/notes/n1.txt.receipt.json n1.receipt.orig.json
sed -i 's/"version": "1.0.0"/"version": "1.0.1"/' out/notes/n1.txt.receipt.json
if affidavit facts audit --store facts.db --receipts out; then
  echo "altered receipt missed?!"
  exit 1
else
  echo "(audit exit $?)"
fi
cp n1.receipt.orig.json out/notes/n1.txt.receipt.json
