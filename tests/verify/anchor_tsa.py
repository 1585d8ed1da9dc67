"""A local RFC 3161 time-stamp authority for tests, made with the real ``openssl`` CLI.

A test CA and TSA certificates are made in a temporary folder (``openssl req``/``x509``), tokens
with ``openssl ts -query`` / ``openssl ts -reply``, and ``openssl ts -verify`` is the oracle the
verifier is compared with. Nothing leaves the folder; no network.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.verify.crypto.treehead import sth_message
from affidavit.verify.json.canonical import py_compact

OPENSSL = shutil.which("openssl")
requires_openssl = pytest.mark.skipif(OPENSSL is None, reason="the openssl CLI is not installed")

LOG_KEY = derive_test_key("TEST-ONLY anchor log key")
TIMEOUT = 30

_CNF = """\
[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
dir = {folder}
serial = {folder}/serial
crypto_device = builtin
signer_cert = {folder}/cert.pem
signer_key = {folder}/key.pem
signer_digest = {signer_digest}
default_policy = 1.3.6.1.4.1.55555.1
digests = sha1, sha256, sha384, sha512
accuracy = secs:1
ordering = yes
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = {ess}
[ v3_tsa ]
basicConstraints = critical,CA:false
keyUsage = {key_usage}
extendedKeyUsage = {eku}
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[ v3_ca ]
basicConstraints = critical,CA:true
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
"""

_KEYS = {
    "rsa": ["-newkey", "rsa:2048"],
    "ec": ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"],
}


def openssl(
    *args: str, cwd: Path, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run ``openssl`` with a fixed argv in ``cwd`` (bounded in time)."""
    assert OPENSSL is not None
    return subprocess.run(
        [OPENSSL, *args], cwd=cwd, input=stdin, capture_output=True, timeout=TIMEOUT, check=False
    )


def _ok(proc: subprocess.CompletedProcess[bytes]) -> subprocess.CompletedProcess[bytes]:
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc


class TestCa:
    """A self-signed test CA (EC P-256) in ``folder``."""

    __test__ = False

    def __init__(self, folder: Path, name: str = "Affidavit Test CA") -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.cnf = folder / "ca.cnf"
        self.cnf.write_text(_CNF.format(folder=folder, signer_digest="sha256", ess="sha256",
                                        eku="critical,timeStamping",
                                        key_usage="critical,digitalSignature"))  # fmt: skip
        self.cert = folder / "ca.pem"
        self.key = folder / "ca.key"
        _ok(openssl("req", "-x509", *_KEYS["ec"], "-nodes", "-keyout", str(self.key),
                    "-out", str(self.cert), "-subj", f"/CN={name}", "-days", "3650",
                    "-config", str(self.cnf), "-extensions", "v3_ca", cwd=folder))  # fmt: skip

    def tsa(
        self,
        name: str,
        *,
        key: str = "rsa",
        ess: str = "sha256",
        eku: str = "critical,timeStamping",
        key_usage: str = "critical,digitalSignature",
        signer_digest: str = "sha256",
    ) -> LocalTsa:
        """A TSA certificate issued by this CA, with its own openssl ``ts`` configuration."""
        return LocalTsa(self, self.folder / name, name, key=key, ess=ess, eku=eku,
                        key_usage=key_usage, signer_digest=signer_digest)  # fmt: skip


class LocalTsa:
    """One TSA: key, certificate (issued by a :class:`TestCa`), and ``openssl ts`` config."""

    def __init__(
        self, ca: TestCa, folder: Path, name: str, *, key: str, ess: str, eku: str,
        key_usage: str, signer_digest: str,
    ) -> None:  # fmt: skip
        folder.mkdir(parents=True)
        self.ca, self.folder = ca, folder
        self.cnf = folder / "tsa.cnf"
        self.cnf.write_text(_CNF.format(folder=folder, signer_digest=signer_digest, ess=ess,
                                        eku=eku, key_usage=key_usage))  # fmt: skip
        (folder / "serial").write_text("01\n")
        self.cert, self.key = folder / "cert.pem", folder / "key.pem"
        _ok(openssl("req", "-new", *_KEYS[key], "-nodes", "-keyout", str(self.key),
                    "-out", "req.csr", "-subj", f"/CN={name}", cwd=folder))  # fmt: skip
        _ok(openssl("x509", "-req", "-in", "req.csr", "-CA", str(ca.cert), "-CAkey", str(ca.key),
                    "-CAcreateserial", "-out", str(self.cert), "-days", "3650",
                    "-extfile", str(self.cnf), "-extensions", "v3_tsa", cwd=folder))  # fmt: skip
        self.count = 0

    def stamp(
        self,
        data: bytes,
        *,
        digest: str = "sha256",
        with_cert: bool = False,
        token_only: bool = False,
        expect_granted: bool = True,
    ) -> bytes:
        """A DER TimeStampResp (or bare token) over ``data`` from ``openssl ts -reply``."""
        self.count += 1
        data_file = self.folder / f"data{self.count}"
        data_file.write_bytes(data)
        query = self.folder / f"q{self.count}.tsq"
        reply = self.folder / f"r{self.count}.tsr"
        cert = ["-cert"] if with_cert else []
        _ok(openssl("ts", "-query", "-data", str(data_file), f"-{digest}", *cert,
                    "-out", str(query), cwd=self.folder))  # fmt: skip
        proc = openssl("ts", "-reply", "-config", str(self.cnf), "-queryfile", str(query),
                       *(["-token_out"] if token_only else []), "-out", str(reply),
                       cwd=self.folder)  # fmt: skip
        if expect_granted:
            _ok(proc)
        return reply.read_bytes()

    def openssl_verify(
        self, data: bytes, response: bytes, *, untrusted: Path | None = None,
        ca: Path | None = None, token_only: bool = False,
    ) -> bool:  # fmt: skip
        """The oracle: ``openssl ts -verify -data`` with this CA and TSA certificate."""
        self.count += 1
        data_file = self.folder / f"vdata{self.count}"
        data_file.write_bytes(data)
        reply = self.folder / f"v{self.count}.tsr"
        reply.write_bytes(response)
        form = ["-token_in"] if token_only else []
        proc = openssl("ts", "-verify", "-data", str(data_file), *form, "-in", str(reply),
                       "-CAfile", str(ca or self.ca.cert),
                       "-untrusted", str(untrusted or self.cert), cwd=self.folder)  # fmt: skip
        return proc.returncode == 0 and b"Verification: OK" in proc.stdout


def resign_for(tsa: LocalTsa, response: bytes, cert: Path) -> bytes:
    """The same token, its ESSCertIDv2 pointed at ``cert`` and re-signed with ``tsa``'s key.

    Simulates a TSA that signs under a certificate openssl would not let it use (e.g. without a
    critical timeStamping EKU): same key, real RSA PKCS#1 v1.5 signature (RFC 5652 §5.4).
    """
    from affidavit.verify.anchor.rfc3161 import load_certificate, parse_token
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding, rsa

    token = parse_token(response)
    old = hashlib.sha256(_der(tsa.cert)).digest()
    new = hashlib.sha256(load_certificate(cert.read_bytes()).public_bytes(
        serialization.Encoding.DER)).digest()  # fmt: skip
    assert token.signed_attrs.count(old) == 1, "the token must carry an ESSCertIDv2 (sha256)"
    attrs = token.signed_attrs.replace(old, new)
    key = serialization.load_pem_private_key(tsa.key.read_bytes(), password=None)
    assert isinstance(key, rsa.RSAPrivateKey)
    signature = key.sign(attrs, padding.PKCS1v15(), hashes.SHA256())
    assert len(signature) == len(token.signature)
    out = response.replace(token.signed_attrs[1:], attrs[1:]).replace(token.signature, signature)
    assert out != response
    return out


def reissue_with_key_of(tsa: LocalTsa, target: LocalTsa) -> None:
    """Give ``target`` a certificate for ``tsa``'s key and serial, with ``target``'s extensions.

    The CA issues it under the same serial so that the token's SignerInfo sid (issuer and
    serial, RFC 5652 §5.3) still names it; only the ESSCertID must be re-pointed.
    """
    from affidavit.verify.anchor.rfc3161 import load_certificate

    serial = load_certificate(tsa.cert.read_bytes()).serial_number
    target.key.write_bytes(tsa.key.read_bytes())
    _ok(openssl("x509", "-x509toreq", "-in", str(tsa.cert), "-signkey", str(tsa.key),
                "-out", "same-key.csr", cwd=target.folder))  # fmt: skip
    _ok(openssl("x509", "-req", "-in", "same-key.csr", "-CA", str(target.ca.cert),
                "-CAkey", str(target.ca.key), "-set_serial", str(serial),
                "-out", str(target.cert), "-days", "30", "-extfile", str(target.cnf),
                "-extensions", "v3_tsa", cwd=target.folder))  # fmt: skip


def _der(pem: Path) -> bytes:
    from affidavit.verify.anchor.rfc3161 import load_certificate
    from cryptography.hazmat.primitives import serialization

    return load_certificate(pem.read_bytes()).public_bytes(serialization.Encoding.DER)


def signed_sth(tree_size: int = 7, *, log_id: str = "affidavit.test/anchor-log") -> dict[str, Any]:
    """A tree head signed by :data:`LOG_KEY` (docs/formats.md §4)."""
    root = hashlib.sha256(f"root {tree_size}".encode()).hexdigest()
    timestamp = "2026-03-01T12:00:00Z"
    signature = LOG_KEY.sign(sth_message(log_id, tree_size, root, timestamp))
    return {"log_id": log_id, "tree_size": tree_size, "root_hash": root, "timestamp": timestamp,
            "signature": base64.b64encode(signature).decode(), "algorithm": "Ed25519"}  # fmt: skip


def sth_bytes(sth: dict[str, Any]) -> bytes:
    """The bytes an anchor time-stamps: py-compact of the tree head (docs/formats.md §1)."""
    return py_compact(sth)


def receipt_for(head: dict[str, Any], tsr: bytes | None, /, **overrides: Any) -> dict[str, Any]:
    """An anchor receipt of the shape the peer serves at /protocol/merkle/anchors."""
    receipt: dict[str, Any] = {
        "receipt_version": "1.0",
        "anchor_id": f"anchor_{head['tree_size']}",
        "sth": head,
        "sth_digest": hashlib.sha256(sth_bytes(head)).hexdigest(),
        "sth_digest_algorithm": "SHA-256",
        "anchor_method": "rfc3161",
        "tsa_url": "http://127.0.0.1:9/tsa",
        "tsa_status": "granted",
        "anchored_at": "2026-03-01T12:00:05Z",
    }
    if tsr is not None:
        receipt["tsr_base64"] = base64.b64encode(tsr).decode()
    receipt.update(overrides)
    return receipt


def _tlv(tag: int, body: bytes) -> bytes:
    """One DER element (X.690 §8.1.3 definite length, shortest form)."""
    if len(body) < 0x80:
        return bytes([tag, len(body)]) + body
    size = len(body).to_bytes((len(body).bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(size)]) + size + body


def with_key_identifier_sid(response: bytes, key_id: bytes) -> bytes:
    """The same TimeStampResp, its SignerInfo naming the signer by SubjectKeyIdentifier
    (version 3, ``sid [0]``, RFC 5652 §5.3) instead of issuer and serial. The sid is outside the
    signed attributes, so the signature stays valid; every enclosing length is re-encoded."""
    from affidavit.verify.anchor.der import read_one

    status, token = read_one(response).children()
    content_type, wrapper = token.children()
    (signed_data,) = wrapper.children()
    *head, signer_set = signed_data.children()
    (signer,) = signer_set.children()
    _version, _sid, *rest = signer.children()
    new_signer = _tlv(0x30, _tlv(0x02, b"\x03") + _tlv(0x80, key_id) + b"".join(
        e.encoded for e in rest))  # fmt: skip
    new_signed = _tlv(0x30, b"".join(e.encoded for e in head) + _tlv(0x31, new_signer))
    new_token = _tlv(0x30, content_type.encoded + _tlv(0xA0, new_signed))
    return _tlv(0x30, status.encoded + new_token)
