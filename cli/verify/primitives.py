"""The ``affidavit verify`` verbs that check one document each, under the trust options
(:mod:`affidavit.cli._trust`): ``checkpoint`` (a C2SP signed note, docs/formats.md §6),
``inclusion`` (RFC 9162 §2.1.3), ``tlog-proof`` (https://c2sp.org/tlog-proof, under a
tlog-policy; its ``extra`` data shown, never trusted), ``dsse`` (an in-toto Statement v1; its
``keyid`` a hint, never trusted), ``scitt`` (RFC 9943 §7.1) and ``anchor`` (an RFC 3161 token
under ``--tsa-cert``, the tree head under its key's validity window, docs/adr/0011); and
``affidavit lookup``, a registry log's entries about a hash (docs/transparency.md "Lookup").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import click
from affidavit.cli._common import emit, emit_json, json_option, print_outcome, read_input, read_json
from affidavit.cli._trust import read_trust, trust_options
from affidavit.cli.render.verdict import error_line, result_lines, step_line
from affidavit.verify import errors
from affidavit.verify.crypto.keys import b64decode_strict
from affidavit.verify.json.forms import is_hex64
from affidavit.verify.results import Result, StepResult

if TYPE_CHECKING:
    from affidavit.verify.crypto.keys import Ed25519PublicKey
    from affidavit.verify.trust import TrustRoot

__all__ = [
    "anchor",
    "checkpoint",
    "describe",
    "dsse",
    "inclusion",
    "lookup",
    "parse_hash",
    "scitt",
    "tlog_proof",
]

MAX_CHECKPOINT_BYTES = 1 << 20
MAX_CERT_BYTES: Final = 1 << 20


def parse_hash(text: str, what: str) -> bytes:
    """A 32-byte hash from 64 hex characters or strict base64.

    Raises:
        ``merkle.bad_hash_length``: it decodes, but not to 32 bytes.
        ``usage.invalid``: neither hex nor base64.
    """
    if is_hex64(text, any_case=True):
        return bytes.fromhex(text)
    try:
        raw = b64decode_strict(text)
    except (ValueError, UnicodeError):
        raise errors.UsageError(f"{what}: not 64 hex characters nor base64") from None
    if len(raw) != 32:
        raise errors.ProofError("merkle.bad_hash_length", f"{what}: {len(raw)} bytes, not 32")
    return raw


@click.command("checkpoint")
@click.argument("source", metavar="FILE|-")
@trust_options
@click.option("--origin", default=None, help="Require this origin line.")
@json_option
def checkpoint(source: str, origin: str | None, as_json: bool, **trust_options: Any) -> None:
    """Verify a C2SP tlog-checkpoint (signed note) against trusted verifier keys."""
    from affidavit.verify.crypto.checkpoint import check_checkpoint  # noqa: PLC0415 - lazy: keeps `affidavit` start fast

    trust = read_trust(**trust_options, needed_by="verify checkpoint")
    verifiers = trust.note_verifiers()
    note = read_input(source, max_bytes=MAX_CHECKPOINT_BYTES)
    result = check_checkpoint(note, verifiers, origin=origin, source=source)
    print_outcome(result, as_json=as_json, extra={"trust": trust.to_json()}, brief=True)


@click.command("inclusion")
@click.option("--leaf-hash", required=True, help="Leaf hash (hex or base64), 32 bytes.")
@click.option("--index", required=True, type=click.IntRange(min=0), help="Leaf index.")
@click.option("--size", required=True, type=click.IntRange(min=0), help="Tree size.")
@click.option("--root", required=True, help="Expected root hash (hex or base64).")
@click.option("--proof", "proof", multiple=True, help="Proof hash, leaf to root (repeatable).")
@json_option
def inclusion(
    *, leaf_hash: str, index: int, size: int, root: str, proof: tuple[str, ...], as_json: bool
) -> None:
    """Verify an RFC 9162 inclusion proof of a leaf hash in a tree of a given size and root."""
    from affidavit.verify.crypto.merkle import check_inclusion  # noqa: PLC0415 - lazy

    leaf = parse_hash(leaf_hash, "--leaf-hash")
    expected_root = parse_hash(root, "--root")
    path = [parse_hash(item, f"--proof #{n + 1}") for n, item in enumerate(proof)]
    result = check_inclusion(leaf, index, size, path, expected_root)
    print_outcome(result, as_json=as_json, brief=True)


@click.command("tlog-proof")
@click.argument("source", metavar="PROOF|-")
@click.option(
    "--entry",
    "entry_file",
    type=click.Path(dir_okay=False),
    help="The logged entry: its bytes are hashed as the RFC 6962 leaf.",
)
@click.option(
    "--leaf-hash",
    metavar="HASH",
    help="The leaf hash instead of --entry (hex or base64, 32 bytes).",
)
@click.option(
    "--policy",
    "policy_file",
    required=True,
    type=click.Path(dir_okay=False),
    help="The C2SP tlog-policy: trusted logs, witnesses and the quorum.",
)
@json_option
def tlog_proof(
    *,
    source: str,
    entry_file: str | None,
    leaf_hash: str | None,
    policy_file: str,
    as_json: bool,
) -> None:
    """Verify a C2SP tlog-proof of an entry under a tlog-policy (witness quorum included)."""
    from affidavit.cli.verify.bundle import read_policy  # noqa: PLC0415 - lazy
    from affidavit.verify.tlog.proof import MAX_PROOF_BYTES, check_proof  # noqa: PLC0415 - lazy

    if (entry_file is None) == (leaf_hash is None):
        raise errors.UsageError("give exactly one of --entry FILE and --leaf-hash HASH")
    policy, _ = read_policy(policy_file)
    entry = None if entry_file is None else read_input(entry_file)
    leaf = None if leaf_hash is None else parse_hash(leaf_hash, "--leaf-hash")
    too_large = (errors.ProofError, "tlog.proof_malformed")
    data = read_input(source, max_bytes=MAX_PROOF_BYTES, too_large=too_large)
    result = check_proof(data, policy, entry=entry, leaf_hash=leaf, source=source)
    print_outcome(result, as_json=as_json, brief=True)


@click.command("dsse")
@click.argument("source", metavar="FILE|-")
@trust_options
@click.option(
    "--threshold",
    type=int,
    default=1,
    show_default=True,
    help="Distinct trusted keys that must each verify a signature.",
)
@click.option(
    "--bundle",
    "bundle_file",
    type=click.Path(dir_okay=False),
    help="The ProofPack bundle a decision Statement summarizes: cross-check subject and predicate.",
)
@json_option
def dsse(
    *,
    source: str,
    threshold: int,
    bundle_file: str | None,
    as_json: bool,
    **trust_options: Any,
) -> None:
    """Verify a DSSE envelope and the in-toto Statement v1 it carries, under trusted keys."""
    from affidavit.verify.dsse.envelope import MAX_ENVELOPE_BYTES  # noqa: PLC0415 - lazy
    from affidavit.verify.dsse.verify import NO_BUNDLE, check_envelope  # noqa: PLC0415 - lazy

    trust = read_trust(**trust_options, needed_by="verify dsse")
    keys = trust.public_keys
    bundle = NO_BUNDLE if bundle_file is None else read_json(bundle_file)
    too_large = (errors.EnvelopeError, "dsse.too_large")
    try:
        data = read_input(source, max_bytes=MAX_ENVELOPE_BYTES, too_large=too_large)
    except errors.EnvelopeError as e:
        result = Result.unreadable_input("dsse", source, e)
    else:
        result = check_envelope(data, keys, threshold=threshold, bundle=bundle, source=source)
    print_outcome(result, as_json=as_json, extra={"trust": trust.to_json()})


@click.command("scitt")
@click.argument("source", metavar="FILE|-")
@trust_options
@click.option(
    "--issuer-key",
    "issuer_keys",
    multiple=True,
    metavar="FILE",
    help="The issuer's public key (Ed25519 in any key form, or P-256 PEM), beside FILE.iss naming"
    " the issuers it signs for: check the statement's signature too (repeatable).",
)
@click.option("--verbose", "-v", is_flag=True, help="List every step, also when verified.")
@json_option
def scitt(
    *,
    source: str,
    issuer_keys: tuple[str, ...],
    verbose: bool,
    as_json: bool,
    **trust_options: Any,
) -> None:
    """Verify a SCITT Transparent Statement: its receipts under trusted log keys."""
    from affidavit.cli.scitt import read_issuer_key  # noqa: PLC0415 - lazy
    from affidavit.verify.scitt.cbor import MAX_CBOR_BYTES  # noqa: PLC0415 - lazy
    from affidavit.verify.scitt.keys import CoseKey  # noqa: PLC0415 - lazy
    from affidavit.verify.scitt.report import verify_transparent_statement  # noqa: PLC0415

    trust = read_trust(**trust_options, needed_by="verify scitt")
    log_keys = [CoseKey.from_ed25519(key, "trusted") for key in trust.public_keys]
    issuers = [read_issuer_key(path) for path in issuer_keys]
    data = read_input(
        source, max_bytes=MAX_CBOR_BYTES, too_large=(errors.ScittError, "cbor.too_large")
    )
    result = verify_transparent_statement(
        data, log_keys=log_keys, issuer_keys=issuers, source=source
    )
    if as_json:
        emit_json({**result.document(), "trust": trust.to_json()})
    elif result.verdict == "unreadable":
        click.echo(error_line(result), err=True)
    else:
        lines = result_lines(result, detailed=verbose or not result.verified)
        statement = result.subject.get("statement") or {}
        lines.insert(1, f"  iss {statement.get('issuer')}, sub {statement.get('subject')}")
        lines.extend(
            f"  receipt {r['index']}: leaf {r['leaf_index']} of {r['tree_size']}, root {r['root']}"
            for r in result.subject.get("receipts", ())
            if r.get("verified")
        )
        click.echo("\n".join(lines))
    click.get_current_context().exit(result.exit_code)


@click.command("anchor")
@click.argument("receipt", metavar="RECEIPT|-")
@click.option(
    "--tsa-cert",
    "tsa_certs",
    multiple=True,
    metavar="PEM",
    help="A TSA certificate (PEM or DER) trusted to time-stamp (repeatable). Without one the "
    "token is not proven and the verdict is unanchored.",
)
@click.option(
    "--ca-cert",
    "ca_certs",
    multiple=True,
    metavar="PEM",
    help="A CA certificate the TSA certificate must chain to at genTime (repeatable).",
)
@trust_options
@click.option("--verbose", "-v", is_flag=True, help="List every step, also when verified.")
@json_option
def anchor(
    *,
    receipt: str,
    tsa_certs: tuple[str, ...],
    ca_certs: tuple[str, ...],
    verbose: bool,
    as_json: bool,
    **trust_options: Any,
) -> None:
    """Verify an anchor receipt: sth_digest, TSA status and (with --tsa-cert) the RFC 3161 token."""
    tsa = tuple(read_input(path, max_bytes=MAX_CERT_BYTES) for path in tsa_certs)
    cas = tuple(read_input(path, max_bytes=MAX_CERT_BYTES) for path in ca_certs)
    if cas and not tsa:
        raise errors.UsageError("--ca-cert needs --tsa-cert (the certificate it anchors)")
    trust = read_trust(**trust_options, windows=True)._replace(tsa_certs=tsa, ca_certs=cas)
    try:
        document = read_json(receipt)
    except errors.ParseError as e:
        if not as_json:
            raise
        from affidavit.verify.anchor.receipt import anchor_result  # noqa: PLC0415 - lazy

        result = anchor_result(receipt, (StepResult.unreadable("parse", e),))
    else:
        result = _verify(document, trust, receipt)
    if as_json or result.verdict == "unreadable":
        print_outcome(result, as_json=as_json, extra={"trust": trust.to_json()})
        return
    click.echo("\n".join(describe(result, verbose=verbose)))
    click.get_current_context().exit(result.exit_code)


def _verify(document: Any, trust: TrustRoot, source: str) -> Result:
    """The receipt under the first trusted key that verifies its tree head (the first key's
    result when none does; no key: the head's signature is not checked)."""
    from affidavit.verify.anchor.receipt import verify_anchor_receipt  # noqa: PLC0415 - lazy

    windows = trust.windows
    results = []
    keys: list[Ed25519PublicKey | None] = [*trust.public_keys] or [None]
    for key in keys:
        result = verify_anchor_receipt(
            document,
            tsa_certs=trust.tsa_certs,
            ca_certs=trust.ca_certs,
            log_key=key,
            log_key_windows=() if key is None else windows.get(key.raw, ()),
            source=source,
        )
        signature = result.step("sth_signature")
        if signature is None or signature.status != "failed":
            return result
        results.append(result)
    return results[0]


def describe(result: Result, *, verbose: bool = False) -> list[str]:
    """The text report: a verdict line, then the steps when not verified or ``verbose``."""
    subject = result.subject
    token: dict[str, Any] = dict(subject["token"] or {})
    if result.verified:
        chain = f", chained to {token['chained_to']}" if token.get("chained_to") else ""
        lines = [
            f"verified: anchor {subject['anchor_id']} time-stamped at {token['gen_time']} by "
            f"{token['tsa_subject']} ({token['imprint_algorithm']} imprint{chain})"
        ]
    else:
        lines = [
            f"{result.verdict}: anchor {subject['anchor_id']}: {result.code}: {result.message}"
        ]
    if verbose or not result.verified:
        lines.extend(step_line(step) for step in result.steps)
    signature = result.step("sth_signature")
    if result.verified and signature is not None and signature.status == "not_checked":
        lines.append(f"  note: {signature.message}")
    return lines


@click.command("lookup")
@click.argument("url", metavar="URL")
@click.argument("digest", metavar="HASH")
@trust_options
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1, max=600),
    default=30.0,
    show_default=True,
    help="Seconds for the whole lookup, every page and leaf.",
)
@json_option
def lookup(url: str, digest: str, timeout: float, as_json: bool, **trust_options: Any) -> None:
    """Find every entry of a registry's log about HASH (64 lowercase hex) and prove each one.

    Trust the log's key with --vkey (name+keyid+base64, as log vkey prints it) or any other
    trust option; a bare key is named by the checkpoint's origin.
    """
    from affidavit.registry.clients.lookup import lookup as run_lookup  # noqa: PLC0415 - lazy: httpx only here

    if not is_hex64(digest):
        hint = " (hashes are lowercase)" if is_hex64(digest, any_case=True) else ""
        raise errors.UsageError(
            f"{digest[:80]!r} is not a hash: 64 lowercase hex characters{hint}; look a name up "
            "by the SHA-256 of its UTF-8"
        )
    trust = read_trust(**trust_options, needed_by="lookup")  # the log's key
    result = run_lookup(url, digest, trust, timeout=timeout)
    emit(as_json, {**result.document(), "trust": trust.to_json()}, *_lookup_lines(result))
    click.get_current_context().exit(result.exit_code)


def _lookup_lines(result: Result) -> list[str]:
    """The report for people, rendered from the result (style.md §17)."""
    subject = result.subject
    checkpoint = subject["checkpoint"] or {}
    where = (
        f"in {checkpoint.get('origin')} at size {checkpoint.get('tree_size')} (checkpoint signed"
        f" by {', '.join(checkpoint.get('verified_by', []))}"
    )
    others = checkpoint.get("other_signers") or []
    where += f"; cosigned by {', '.join(others)}, not checked here)" if others else ")"
    entries = subject["entries"]
    if result.verified:
        count = f"{len(entries)} {'entry' if len(entries) == 1 else 'entries'}"
        lines = [f"found: {count} about {subject['hash']} {where}"]
        lines.extend(
            f"  #{entry['index']}  {entry['kind']:<9} {', '.join(entry['matched']):<28} "
            f"leaf {entry['leaf_hash']}"
            for entry in entries
        )
        if subject["truncated"]:
            lines.append("  (more entries follow; only the first 1000 were read)")
        lines.append("  every inclusion proof and leaf verified against the trusted checkpoint")
        return lines
    failing = result.failed_step
    if failing is not None:
        return [f"not verified: {failing.name}: {failing.code}: {failing.message}"]
    if checkpoint:
        return [f"not found: no entry about {subject['hash']} {where}", f"  {result.message}"]
    return [f"not verified: {result.message}"]
