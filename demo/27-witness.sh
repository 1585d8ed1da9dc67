#!/usr/bin/env bash
# Step 27: a log others can check (C2SP). A local witness cosigns the log's checkpoint (Ed25519
# and ML-DSA-44), the tree is published as static tiles, an offline tlog-proof of one entry is
# verified under a tlog-policy (witness quorum), a policy the checkpoint cannot meet is refused,
# and a monitor follows the tiles over plain HTTP. Standalone: writes into $DEMO_DIR/tlog; the
# witness and the file server are stopped by a trap.
set -euo pipefail
work="$DEMO_DIR/tlog"
rm -rf "$work"
mkdir -p "$work/items"
cd "$work"
db="$work/log.db"
# ML-DSA-44 keys and signatures are long: show the first 100 characters of each line.
show() { cut -c1-100 "$@" | sed 's/^/   /'; }
free_port() { python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

echo "-- a log of five artefacts, and its verifier key (affidavit log vkey)"
affidavit keys generate --dir keys --publisher-id demo-tlog --key-id demo-tlog >/dev/null
affidavit log init "$db" --key keys/demo-tlog.key --log-id demo.affidavit.example/tlog >/dev/null
for i in 1 2 3 4 5; do printf '{"artefact": %d}\n' "$i" >"items/$i.json"; done
affidavit log append "$db" items/*.json >/dev/null
log_vkey="$(affidavit log vkey "$db")"
echo "   $log_vkey"

echo "-- a witness with an Ed25519 and an ML-DSA-44 key, serving on 127.0.0.1"
mkdir -p witness
witness_name="witness.demo.example/w1"
affidavit witness keygen --key witness/w1.key --ml-dsa-key witness/w1.mldsa >/dev/null
mapfile -t witness_vkeys < <(affidavit witness vkey --name "$witness_name" --key witness/w1.key --ml-dsa-key witness/w1.mldsa)
witness_port="$(free_port)"
witness_url="http://127.0.0.1:$witness_port"
affidavit witness serve --name "$witness_name" --key witness/w1.key --ml-dsa-key witness/w1.mldsa \
  --log-vkey "$log_vkey" --data-dir witness/state --port "$witness_port" 2>witness/server.log &
witness_pid=$!
files_pid=""
trap 'kill -TERM $witness_pid $files_pid 2>/dev/null || true; wait 2>/dev/null || true' EXIT
python - "$witness_url" <<'PY'
import sys, time, httpx
for _ in range(200):
    try:
        httpx.get(sys.argv[1] + "/", timeout=0.5)
        break
    except httpx.HTTPError:
        time.sleep(0.05)
PY

echo "-- affidavit log head --checkpoint --witness: the checkpoint, cosigned"
affidavit log head "$db" --checkpoint --witness "$witness_url#${witness_vkeys[0]}#${witness_vkeys[1]}" >checkpoint.txt
show checkpoint.txt

echo "-- affidavit log tiles: the tree as static C2SP tiles any web server or CDN can serve"
affidavit log tiles "$db" tiles
find tiles -type f | sort | sed 's/^/   /'

echo "-- a tlog-policy: this log, the witness (both keys), quorum = the witness"
cat >policy.txt <<EOF
log $log_vkey
witness w1-ed25519 ${witness_vkeys[0]}
witness w1-mldsa ${witness_vkeys[1]} $witness_url
group w1 all w1-ed25519 w1-mldsa
quorum w1
EOF
show policy.txt

echo "-- affidavit log proof: an offline tlog-proof of entry 2, verified with no network"
affidavit log proof "$db" --index 2 --out entry-2.tlog-proof
show entry-2.tlog-proof
affidavit verify tlog-proof entry-2.tlog-proof --entry items/3.json --policy policy.txt

echo "-- fail closed: a policy that also requires a witness who never cosigned is not met (exit 1)"
affidavit witness keygen --key witness/w2.key >/dev/null
w2_vkey="$(affidavit witness vkey --name witness.demo.example/w2 --key witness/w2.key)"
{ grep -v '^quorum' policy.txt; echo "witness w2 $w2_vkey"; echo "group both all w1 w2"; echo "quorum both"; } >strict-policy.txt
status=0
affidavit verify tlog-proof entry-2.tlog-proof --entry items/3.json --policy strict-policy.txt || status=$?
echo "   exit code $status"
test "$status" -eq 1
echo "-- and the wrong entry is not included (exit 1)"
status=0
affidavit verify tlog-proof entry-2.tlog-proof --entry items/4.json --policy policy.txt || status=$?
echo "   exit code $status"
test "$status" -eq 1

echo "-- a monitor follows the tiles over plain HTTP (python's file server stands in for a CDN)"
files_port="$(free_port)"
python -m http.server "$files_port" --bind 127.0.0.1 --directory tiles >/dev/null 2>&1 &
files_pid=$!
for _ in $(seq 1 100); do
  python -c "import httpx,sys; httpx.get('http://127.0.0.1:$files_port/checkpoint').raise_for_status()" 2>/dev/null && break
  sleep 0.05
done
affidavit log monitor "http://127.0.0.1:$files_port/" --vkey "$log_vkey" --state monitor.json --policy policy.txt --entries
echo "-- the log grows: cosign, publish, and the monitor checks the new tree extends the old one"
printf '{"artefact": 6}\n' >items/6.json
affidavit log append "$db" items/6.json >/dev/null
affidavit log head "$db" --checkpoint --witness "$witness_url#${witness_vkeys[0]}#${witness_vkeys[1]}" >/dev/null
affidavit log tiles "$db" tiles
affidavit log monitor "http://127.0.0.1:$files_port/" --vkey "$log_vkey" --state monitor.json --policy policy.txt --entries
