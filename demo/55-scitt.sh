#!/usr/bin/env bash
# SCITT on the registry's log (docs/transparency.md "SCITT"): sign a Signed Statement over an
# artefact, register it with the registry (SCRAPI POST /entries), verify the Transparent Statement
# offline under the log key, then in scitt-cose (an independent verifier) when it is installed.
# Needs nothing from earlier steps; writes into $DEMO_DIR/scitt; stops its registry with a trap.
set -euo pipefail
source "$(dirname "$0")/_registry.sh"
work="$DEMO_DIR/scitt"
mkdir -p "$work"
cd "$work"
data="$work/data"
url="$(free_url)"

echo "-- affidavit keys generate: the issuer's key; its public half is the registration policy"
affidavit keys generate --dir keys --publisher-id acme --key-id acme-issuer >/dev/null
mkdir -p issuers
cp keys/acme-issuer.pub issuers/
printf 'https://acme.example\n' > issuers/acme-issuer.pub.iss   # the issuer(s) this key signs for

echo "-- affidavit scitt sign: a Signed Statement (COSE_Sign1, CWT iss and sub) over an artefact"
printf '{"artefact": "acme-app-1.2.3.tar.gz", "sha256": "%s"}\n' "$(printf demo | sha256sum | cut -c1-64)" > artefact.json
affidavit scitt sign artefact.json --key keys/acme-issuer.key --issuer https://acme.example \
  --subject pkg:acme/app@1.2.3 --content-type application/json

echo "-- affidavit registry serve --scitt-issuers issuers/ on $url (background; stopped by a trap)"
serve_registry "$work" "$data" "$url" --scitt-issuers issuers

echo "-- affidavit scitt register: POST /entries, the receipt, the Transparent Statement"
affidavit scitt register "$url" artefact.json.cose

echo "-- the log key, pinned from the registry's key folder (a relying party gets it out of band)"
python - "$data/keys/registry-1.key" <<'PY'
import sys
from affidavit.attest.keyring import load_signing_key
open("log.pub", "w").write(load_signing_key(sys.argv[1]).public_key.b64 + "\n")
PY

echo "-- affidavit verify scitt: offline, the receipt under the log key, the signature under the issuer's"
affidavit verify scitt artefact.json.transparent.cose --public-key log.pub \
  --issuer-key issuers/acme-issuer.pub --verbose

echo "-- the receipt's root is the log's checkpoint root (GET /tlog/checkpoint)"
curl_like() { python -c 'import sys, httpx; print(httpx.get(sys.argv[1]).text, end="")' "$1"; }
curl_like "$url/tlog/checkpoint" | sed -n '2,3p' | sed 's/^/   /'

echo "-- a changed byte is exit 1"
python - <<'PY'
data = bytearray(open("artefact.json.transparent.cose", "rb").read())
data[-1] ^= 1  # the statement's signature's last byte
open("tampered.cose", "wb").write(bytes(data))
PY
if affidavit verify scitt tampered.cose --public-key log.pub --issuer-key issuers/acme-issuer.pub; then
  echo "   the tampered statement verified: this is a bug" >&2; exit 1
fi

if python -c 'import scitt_cose' 2>/dev/null; then
  echo "-- scitt-cose (an independent implementation) verifies the same receipt"
  python - <<'PY'
import hashlib
from affidavit.attest.keyring import public_key_pem
from affidavit.verify.crypto.keys import Ed25519PublicKey
from scitt_cose import extract_receipts
from scitt_cose.receipt import verify_receipt
signed = open("artefact.json.cose", "rb").read()
(receipt,) = extract_receipts(open("artefact.json.transparent.cose", "rb").read())
key = Ed25519PublicKey.from_b64(open("log.pub").read().strip())
result = verify_receipt(receipt, leaf_entry_hex=hashlib.sha256(signed).hexdigest(),
                        log_public_key_pem=public_key_pem(key))
print(f"   scitt-cose: ok={result.ok} tree_size={result.tree_size} root={result.root}")
assert result.ok, result.errors
PY
else
  echo "-- scitt-cose is not installed (make install-dev installs it): skipped"
fi
