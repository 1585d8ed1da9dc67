"""``affidavit verify bundle`` and ``affidavit verify attestation``: offline, fail-closed.

Exit codes: 0 every input verified, 1 some input not verified (failed or unanchored), 2 some input
unreadable (bad JSON, not a bundle, missing file) or bad usage. With several inputs the largest
code wins. ``--json`` prints one document (``specs/verify-result.schema.json``).

Trust comes only from the caller, through the trust options every verify verb takes
(:mod:`affidavit.cli._trust`, docs/adr/0016-one-trust-input.md): ``--public-key-base64 K``,
``--public-key F`` (alias ``--publisher-doc``: a JSON key document as aigentsy-verify takes it, a
PEM, base64 text), ``--trusted-keys DIR`` (its keys; other files skipped), ``--vkey``,
``--fetch-key URL``. Tree-head keys honour validity windows (docs/adr/0011). Without a key, a
self-consistent bundle is ``unanchored``, never verified, which is what aigentsy-verify's
``--strict`` asks for: the flag is accepted and Affidavit is always strict.

Actor signatures verify ``ok`` only under keys the caller trusts (``--trusted-actor-keys PATH``: a
folder of key files, or a pinned key-directory JSON); under keys only the bundle carries they are
``self_asserted``. ``--require-actor-signatures`` fails a bundle unless every event is signed
under a caller-trusted key. ``--profile swarm-strict`` adds the swarm coverage, snapshot and
decision steps (docs/adr/0008-actor-keys-and-events-after-finality.md). ``--policy POLICY`` (a
C2SP tlog-policy file) adds the ``tlog_proof`` step and requires it: the bundle's tlog-proof of its
finality leaf, under a checkpoint of a policy log cosigned by the policy's witness quorum
(:mod:`affidavit.verify.bundles.tlog_step`); without it a bundle is not verified
(``bundle.tlog_proof_missing``).

Start-up is kept small (docs/adr/0003-cold-start.md, 0022-click-alone.md): the verifier is imported
when the command runs, and nothing on this path imports jsonschema, httpx or cryptography (unless a
PEM key is read). Results are typed (:mod:`affidavit.verify.results`), rendered for people by
:mod:`affidavit.cli.render.verdict`; this module only prints them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple, NoReturn

import click
from affidavit.cli._batch import Progress, map_in_workers
from affidavit.cli._common import json_option
from affidavit.cli._input import read_input
from affidavit.cli._trust import folder_files, read_trust, trust_options
from affidavit.cli.render.verdict import outcome_blocks
from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.trusted_keys import parse_key_bytes
from affidavit.verify.json.strict import loads
from affidavit.verify.results import Report, Result

if TYPE_CHECKING:
    from affidavit.verify.trust import TrustRoot

__all__ = ["attestation", "bundle", "read_policy"]

# -- the commands ---------------------------------------------------------------------------------


@click.command("bundle")
@click.argument("inputs", nargs=-1, required=True)
@trust_options
@click.option(
    "--profile",
    type=click.Choice(["default", "swarm-strict"]),
    default="default",
    show_default=True,
    help="Verification profile: default, or swarm-strict (every designated swarm event signed by"
    " an enrolled, valid actor key).",
)
@click.option(
    "--trusted-actor-keys",
    "actor_keys_path",
    type=click.Path(),
    metavar="PATH",
    help="Actor keys the caller trusts: a folder of key files (*.pub, *.json, *.pem; a JSON"
    " document with actor_id binds the key to that actor) or a pinned key directory JSON."
    " Without it actor signatures are only self_asserted.",
)
@click.option(
    "--require-actor-signatures",
    "require_actor",
    is_flag=True,
    help="Fail unless every event carries an actor signature under a caller-trusted key.",
)
@click.option(
    "--policy",
    "policy_file",
    type=click.Path(dir_okay=False),
    metavar="POLICY",
    help="A C2SP tlog-policy file: also require the bundle's tlog_proof, its checkpoint signed by"
    " a policy log and cosigned by the policy's witness quorum.",
)
@click.option(
    "--attest-result",
    "attest_key",
    type=click.Path(dir_okay=False),
    metavar="KEYFILE",
    help="Sign the verdict as a SLSA Verification Summary (in-toto, DSSE) with this Ed25519"
    " private key (PEM); with --out, one bundle only.",
)
@click.option(
    "--out",
    "vsa_out",
    type=click.Path(dir_okay=False),
    metavar="VSA",
    help="Where --attest-result writes the VSA envelope (PASSED or FAILED; the exit code stays"
    " the verdict's).",
)
@click.option("--jobs", type=click.IntRange(1, 64), default=1, help="Worker processes.")
@json_option
def bundle(
    *,
    inputs: tuple[str, ...],
    profile: str,
    actor_keys_path: str | None,
    require_actor: bool,
    policy_file: str | None,
    attest_key: str | None,
    vsa_out: str | None,
    jobs: int,
    as_json: bool,
    **trust_options: Any,
) -> None:
    """Verify ProofPack bundles (files, or folders of *.json) offline.

    Verified only when every part checks and the tree head is signed by a trusted key.
    """
    if (attest_key is None) != (vsa_out is None):
        raise errors.UsageError("--attest-result KEYFILE and --out VSA go together")
    trust = read_trust(**trust_options, windows=True)  # tree heads honour windows (ADR 0011)
    raw_keys = trust.raw_keys
    policy = policy_bytes = None
    if policy_file is not None:  # only then: the tlog modules (docs/adr/0003-cold-start.md)
        policy, policy_bytes = _read_policy(policy_file)
    actor_keys = _actor_keys(actor_keys_path)
    settings = _Settings(actor_keys, require_actor, profile, policy, tuple(trust.windows.items()))
    paths = _expand(inputs)
    if not paths:
        raise errors.UsageError("no bundle files found in the given inputs")
    if attest_key is not None and vsa_out is not None:
        _exit(_run_attested(paths, trust, settings, policy_bytes, attest_key, vsa_out, as_json))
    progress = Progress(len(paths))
    results: list[Result] = []
    for result in map_in_workers(
        _verify_one,
        paths,
        jobs=jobs,
        initializer=_init_worker,
        initargs=(raw_keys, settings),
        max_chunk=256,
        chunks_per_worker=4,
    ):
        results.append(result)
        progress.tick()
    _exit(_finish(results, as_json, "bundle", len(paths) == 1, trust))


@click.command("attestation")
@click.argument("source")
@trust_options
@json_option
def attestation(*, source: str, as_json: bool, **trust_options: Any) -> None:
    """Verify an OutcomeAttestation: payload hash, then the signature under a trusted key."""
    from affidavit.verify.bundles.attestation import verify_attestation  # noqa: PLC0415 - ADR 0022: not for bundle

    trust = read_trust(**trust_options)
    result: Result
    try:
        document = loads(read_input(source))
    except errors.AffidavitError as e:
        result = Result.unreadable_input("attestation", source, e)
    else:
        result = verify_attestation(document, trust.public_keys, source=source)
    _exit(_finish([result], as_json, "attestation", True, trust))


def _exit(code: int) -> NoReturn:
    """End the command with the report's exit code: 0 verified, 1 not verified, 2 unreadable."""
    click.get_current_context().exit(code)


# -- input ----------------------------------------------------------------------------------------


def _expand(inputs: Iterable[str]) -> list[str]:
    """Files as given; a folder stands for its ``*.json`` files, sorted."""
    out: list[str] = []
    for item in inputs:
        if os.path.isdir(item):
            from pathlib import Path  # noqa: PLC0415 - lazy: only for a folder input

            path = Path(item)
            out.extend(str(p) for p in sorted(path.glob("*.json")) if p.is_file())
        else:
            out.append(item)
    return out


def read_policy(source: str) -> Any:
    """Read and parse a tlog-policy file (a path or ``-``): a
    :class:`~affidavit.verify.tlog.policy.Policy`.

    Raises:
        ``tlog.policy_malformed``: not a valid policy, or larger than the limit.
        ``io.unreadable``: the file cannot be read.
    """
    return _read_policy(source)[0]


def _read_policy(source: str) -> tuple[Any, bytes]:
    """:func:`read_policy`, and the bytes it was parsed from (the VSA's trust digest)."""
    from affidavit.verify.tlog.policy import MAX_POLICY_BYTES, parse_policy  # noqa: PLC0415 - only with --policy

    too_large = (errors.ProofError, "tlog.policy_malformed")
    data = read_input(source, max_bytes=MAX_POLICY_BYTES, too_large=too_large)
    try:
        return parse_policy(data), data
    except errors.ProofError as e:
        e.message = f"{source}: {e.message}"
        raise


# -- work (runs in this process or in --jobs worker processes) ---------------------------------

_VERIFIER: Any = None


class _Settings(NamedTuple):
    """What a verifier needs besides the log keys (picklable: sent to --jobs workers)."""

    actor_keys: tuple[Any, ...] = ()  # TrustedActorKey tuples (verify.bundle_actor_trust)
    require_actor: bool = False
    profile: str = "default"
    policy: Any = None  # a parsed tlog-policy (verify.tlog.policy.Policy), only with --policy
    key_windows: tuple[tuple[bytes, tuple[Any, ...]], ...] = ()  # (raw key, KeyWindows), ADR 0011


_DEFAULT_SETTINGS: Final = _Settings()


def _init_worker(raw_keys: list[bytes], settings: _Settings = _DEFAULT_SETTINGS) -> None:
    # Here, not at the top: verify attestation and verify --help import this module and never
    # verify a bundle (~15 ms each, docs/adr/0022-click-alone.md).
    from affidavit.attest.plugins import installed_validators  # noqa: PLC0415 - ADR 0022
    from affidavit.verify.bundles.verifier import BundleVerifier  # noqa: PLC0415 - ADR 0022

    trust = None
    if settings.actor_keys:
        from affidavit.verify.bundles.actor_trust import ActorTrust  # noqa: PLC0415 - only with actor keys

        trust = ActorTrust(settings.actor_keys)
    global _VERIFIER  # noqa: PLW0603 - one verifier per process, so head checks are memoized
    _VERIFIER = BundleVerifier(
        [Ed25519PublicKey(raw) for raw in raw_keys],
        actor_trust=trust,
        require_actor_signatures=settings.require_actor,
        profile=settings.profile,
        tlog_policy=settings.policy,
        key_windows=dict(settings.key_windows),
        validators=installed_validators(),  # the installed plug-ins re-run too
    )


def _actor_keys(path: str | None) -> tuple[Any, ...]:
    """``--trusted-actor-keys``: a folder of key files or a pinned key-directory JSON file.

    Key files are read with the strict key loader (:mod:`affidavit.verify.crypto.trusted_keys`); a
    JSON file with ``actor_id`` binds its key to that actor; a JSON file without
    ``public_key_base64`` is read as a pinned key directory. An empty folder is refused (fail
    closed).
    """
    if path is None:
        return ()
    from affidavit.verify.bundles.actor_trust import (  # noqa: PLC0415 - only with actor keys
        ActorTrust,
        TrustedActorKey,
    )

    if os.path.isfile(path):
        return ActorTrust.from_directory(loads(read_input(path)), source=path).keys
    if not os.path.isdir(path):
        raise errors.ParseError("io.unreadable", f"{path}: no such file or folder")
    files = folder_files(path)[0]  # the one folder rule (cli/_trust.py); other files skipped
    if not files:
        raise errors.UsageError(f"{path}: no *.pub, *.json or *.pem key files (fail closed)")
    keys: list[Any] = []
    for file in files:
        data = read_input(file)
        document = loads(data) if file.endswith(".json") else None
        if isinstance(document, dict) and "public_key_base64" not in document:
            keys.extend(ActorTrust.from_directory(document, source=file).keys)
            continue
        actor = document.get("actor_id") if isinstance(document, dict) else None
        if actor is not None and (not isinstance(actor, str) or not actor):
            raise errors.UsageError(f"{file}: actor_id must be a non-empty string")
        keys.append(TrustedActorKey(parse_key_bytes(data, source=file).key.raw, actor))
    return tuple(keys)


def _verify_one(source: str) -> Result:
    try:
        data = read_input(source)
    except errors.AffidavitError as e:
        result: Result = _VERIFIER.unreadable(source, e)
    else:
        result = _VERIFIER.verify_bytes(data, source=source)
    return result


# -- output -------------------------------------------------------------------------------------


def _finish(
    results: Sequence[Result], as_json: bool, kind: str, detailed: bool, trust: TrustRoot
) -> int:
    """Print the report (:class:`~affidavit.verify.results.Report`, as text by
    :mod:`affidavit.cli.render.verdict`), with the trust it was verified under in ``--json``;
    return its exit code, the largest of the verdicts'."""
    report = Report(kind, tuple(results))
    extra = {"trust": trust.to_json()}
    for text, to_stderr in outcome_blocks(report, as_json=as_json, extra=extra, detailed=detailed):
        click.echo(text, err=to_stderr)
    return report.exit_code


def _run_attested(  # noqa: PLR0917 - the verification's context, then the VSA's
    paths: list[str],
    trust: TrustRoot,
    settings: _Settings,
    policy_bytes: bytes | None,
    key_file: str,
    vsa_out: str,
    as_json: bool,
) -> int:
    """``verify bundle --attest-result KEYFILE --out VSA``: verify one bundle, print the report
    as without the options, then write the verdict as a signed SLSA VSA v1
    (:mod:`affidavit.attest.intoto.vsa`), PASSED or FAILED alike: a failed verification is
    evidence too. The exit code stays the verdict's. An input that is not a bundle at all (no
    ``deal_id`` to name) gets no VSA: a note on stderr says why.

    Only this path imports attest.intoto and the signing key loader (~25 ms, ADR 0022).
    """
    from affidavit.attest.intoto.sign import sign_statement  # noqa: PLC0415 - lazy: only with --attest-result
    from affidavit.attest.intoto.vsa import trust_digest, trust_document, vsa_statement  # noqa: PLC0415 - lazy
    from affidavit.attest.keyring import load_signing_key  # noqa: PLC0415 - lazy

    if len(paths) != 1:
        raise errors.UsageError(f"--attest-result summarizes one bundle; {len(paths)} were given")
    key = load_signing_key(key_file)  # a bad key is exit 2 before anything is verified
    (path,) = paths
    raw_keys = trust.raw_keys
    _init_worker(raw_keys, settings)
    try:
        data = read_input(path)
    except errors.AffidavitError as e:
        return _finish([_VERIFIER.unreadable(path, e)], as_json, "bundle", True, trust)
    result: Result = _VERIFIER.verify_bytes(data, source=path)
    code = _finish([result], as_json, "bundle", True, trust)
    vsa_trust = trust_document(
        raw_keys,
        actor_keys=[(k.raw, k.actor_id) for k in settings.actor_keys],
        profile=settings.profile,
        require_actor_signatures=settings.require_actor,
        tlog_policy=policy_bytes,
    )
    try:
        statement = vsa_statement(
            loads(data),
            data,
            passed=result.verdict == "verified",
            policy_digest=trust_digest(vsa_trust),
        )
    except errors.AffidavitError as e:
        click.echo(f"note: no verification summary written: {e.code}: {e.message}", err=True)
        return code
    _write_envelope(vsa_out, sign_statement(statement, key))
    outcome = statement["predicate"]["verificationResult"]
    click.echo(f"note: wrote verification summary {vsa_out}: {outcome}", err=True)
    return code


def _write_envelope(path: str, envelope: Any) -> None:
    """The DSSE envelope as one line of standard JSON (DSSE envelope.md), written atomically."""
    from affidavit.attest.files import atomic_write  # noqa: PLC0415 - lazy: pathlib (cold start)
    from affidavit.verify.dsse.envelope import envelope_json  # noqa: PLC0415 - lazy

    text = json.dumps(envelope_json(envelope), separators=(",", ":")) + "\n"
    atomic_write(path, text.encode("ascii"))
