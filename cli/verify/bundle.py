"""``affidavit verify bundle`` and ``affidavit verify attestation``: offline, fail-closed.

Many inputs stream, each result printed as it is decided, in input order, over worker processes
(docs/adr/0023-streamed-bulk-verification.md, :mod:`affidavit.cli._batch`). Trust comes only from
the trust options (:mod:`affidavit.cli._trust`, docs/adr/0016-one-trust-input.md); the verifier
is imported when the command runs (docs/adr/0003-cold-start.md, 0022-click-alone.md).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import click
from affidavit.cli._batch import Progress, default_jobs, map_in_workers
from affidavit.cli._common import exit_with, json_option, labelled, print_outcome, read_input
from affidavit.cli._trust import folder_files, read_trust, trust_options
from affidavit.cli.render.verdict import error_line, outcome_blocks, result_lines
from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey
from affidavit.verify.crypto.trusted_keys import parse_key_bytes
from affidavit.verify.json.strict import loads
from affidavit.verify.results import RESULT_VERSION, VERDICT_EXIT, VERDICTS, Report, Result

if TYPE_CHECKING:
    from affidavit.verify.trust import TrustRoot

__all__ = ["attestation", "bundle", "read_policy"]


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
@click.option(
    "--jobs",
    type=click.IntRange(1, 64),
    default=None,
    help="Worker processes [default: every core, when there are enough bundles to pay for them].",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON document to stdout (written as results are decided).",
)
@click.option(
    "--jsonl",
    "as_jsonl",
    is_flag=True,
    help="Print JSON Lines: one result per line as it is decided, then one summary line.",
)
def bundle(
    *,
    inputs: tuple[str, ...],
    profile: str,
    actor_keys_path: str | None,
    require_actor: bool,
    policy_file: str | None,
    attest_key: str | None,
    vsa_out: str | None,
    jobs: int | None,
    as_json: bool,
    as_jsonl: bool,
    **trust_options: Any,
) -> None:
    """Verify ProofPack bundles (files, or folders of *.json) offline.

    Verified only when every part checks and the tree head is signed by a trusted key. In a
    folder, JSON files that are not bundles at all (a key file) are skipped and counted.
    """
    if (attest_key is None) != (vsa_out is None):
        raise errors.UsageError("--attest-result KEYFILE and --out VSA go together")
    if as_json and as_jsonl:
        raise errors.UsageError("--json and --jsonl: choose one")
    trust = read_trust(**trust_options, windows=True)  # tree heads honour windows (ADR 0011)
    raw_keys = trust.raw_keys
    policy = policy_bytes = None
    if policy_file is not None:  # only then: the tlog modules (docs/adr/0003-cold-start.md)
        policy, policy_bytes = read_policy(policy_file)
    actor_keys = _actor_keys(actor_keys_path)
    items = _expand(inputs)
    if not items:
        raise errors.UsageError("no bundle files found in the given inputs")
    output = "jsonl" if as_jsonl else "json" if as_json else "text"
    if len(items) == 1 and output == "text":
        output = "detailed"  # one bundle: every step (as before; ADR 0023)
    windows = tuple(trust.windows.items())
    settings = _Settings(actor_keys, require_actor, profile, policy, windows, output)
    if attest_key is not None and vsa_out is not None:
        paths = [path for path, _ in items]
        exit_with(_run_attested(paths, trust, settings, policy_bytes, attest_key, vsa_out))
        return
    if jobs is None:
        jobs = default_jobs(len(items), min_per_worker=_MIN_BUNDLES_PER_WORKER)
    exit_with(_stream(items, jobs, raw_keys, settings, trust))


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
    report = Report("attestation", (result,))
    print_outcome(report, as_json=as_json, extra={"trust": trust.to_json()})


def _expand(inputs: Iterable[str]) -> list[tuple[str, bool]]:
    """Each input as ``(path, found in a folder)``: files as given; a folder stands for its
    ``*.json`` files (regular files, not hidden ones), sorted by name."""
    out: list[tuple[str, bool]] = []
    for item in inputs:
        if os.path.isdir(item):
            with os.scandir(item) as entries:
                names = sorted(
                    e.name
                    for e in entries
                    if e.name.endswith(".json") and not e.name.startswith(".") and e.is_file()
                )
            out.extend((os.path.join(item, name), True) for name in names)
        else:
            out.append((item, False))
    return out


def read_policy(source: str) -> tuple[Any, bytes]:
    """Read and parse a tlog-policy file (a path or ``-``): a
    :class:`~affidavit.verify.tlog.policy.Policy`, and the bytes it was parsed from (the VSA's
    trust digest).

    Raises:
        ``tlog.policy_malformed``: not a valid policy, or larger than the limit.
        ``io.unreadable``: the file cannot be read.
    """
    from affidavit.verify.tlog.policy import MAX_POLICY_BYTES, parse_policy  # noqa: PLC0415 - only with --policy

    too_large = (errors.ProofError, "tlog.policy_malformed")
    data = read_input(source, max_bytes=MAX_POLICY_BYTES, too_large=too_large)
    with labelled(source, errors.ProofError):
        return parse_policy(data), data


# -- work (runs in this process or in --jobs worker processes) ---------------------------------

_VERIFIER: Any = None


class _Settings(NamedTuple):
    """What a verifier needs besides the log keys (picklable: sent to --jobs workers)."""

    actor_keys: tuple[Any, ...] = ()  # TrustedActorKey tuples (verify.bundle_actor_trust)
    require_actor: bool = False
    profile: str = "default"
    policy: Any = None  # a parsed tlog-policy (verify.tlog.policy.Policy), only with --policy
    key_windows: tuple[tuple[bytes, tuple[Any, ...]], ...] = ()  # (raw key, KeyWindows), ADR 0011
    output: str = "text"  # how a worker renders each result: text, detailed, json or jsonl


_DEFAULT_SETTINGS: Final = _Settings()
_OUTPUT = "text"  # this process's _Settings.output, set with the verifier

# Fewer bundles than this per core run in this process: a worker costs a process start and a
# verifier's set-up (~0.1 s, about 500 bundles' work; ADR 0023).
_MIN_BUNDLES_PER_WORKER: Final = 500


def _init_worker(raw_keys: list[bytes], settings: _Settings = _DEFAULT_SETTINGS) -> None:
    # Here, not at the top: verify attestation and verify --help import this module and never
    # verify a bundle (~15 ms each, docs/adr/0022-click-alone.md).
    from affidavit.attest.plugins import installed_validators  # noqa: PLC0415 - ADR 0022
    from affidavit.verify.bundles.verifier import BundleVerifier  # noqa: PLC0415 - ADR 0022

    trust = None
    if settings.actor_keys:
        from affidavit.verify.bundles.actor_trust import ActorTrust  # noqa: PLC0415 - only with actor keys

        trust = ActorTrust(settings.actor_keys)
    global _VERIFIER, _OUTPUT  # noqa: PLW0603 - one verifier per process (memoized head checks)
    _OUTPUT = settings.output
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
    """``--trusted-actor-keys``: a folder of key files (a JSON one with ``actor_id`` binds its
    key to that actor; one without ``public_key_base64`` is a pinned key directory), or a pinned
    key-directory JSON file. An empty folder is refused (fail closed)."""
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


# The bundle's top-level fields (docs/formats.md §4): a JSON file in a folder that has none of
# them is not a bundle at all (a key file beside the bundles) and is skipped, counted; one that
# has any is a bundle, verified, and fails closed (``bundle.malformed``) if it is incomplete.
_BUNDLE_FIELDS: Final = ("deal_id", "events", "proofs", "bundle_hash")

# What a worker sends back for one input: (verdict or "skipped", code, text, to stderr). The
# result is rendered where it was decided, so only its text crosses between processes.
Decided = tuple[str, str | None, str, bool]


def _decide(item: tuple[str, bool]) -> Decided:
    """Read, parse and verify one input, and render it as this process's output mode asks."""
    source, in_folder = item
    try:
        document = loads(read_input(source))
    except errors.AffidavitError as e:
        result: Result = _VERIFIER.unreadable(source, e)
    else:
        if in_folder and not (
            isinstance(document, dict) and any(f in document for f in _BUNDLE_FIELDS)
        ):
            note = f"note: skipped {source}: not a bundle (none of {', '.join(_BUNDLE_FIELDS)})"
            return "skipped", None, note, True
        result = _VERIFIER.verify(document, source=source)
    # The verdict is decided from the steps on each read: read it once, the code only when
    # there is one (issue 34: every read walks the steps again).
    verdict = result.verdict
    code = None if verdict == "verified" else result.code
    output = _OUTPUT
    if output == "text" and verdict == "verified":  # result_lines' one line, nothing to add
        return verdict, code, f"{source}: {verdict}", False
    if output == "jsonl":  # one line: the result, versioned (ADR 0023)
        return verdict, code, json.dumps(result.document(), ensure_ascii=False), False
    if output == "json":  # one element of the document's results, indented as in it
        text = json.dumps(result.to_json(), indent=2, ensure_ascii=False)
        return verdict, code, "    " + text.replace("\n", "\n    "), False
    if verdict == "unreadable":
        return verdict, code, error_line(result), True
    lines = result_lines(result, detailed=output == "detailed")
    if output == "detailed":
        return verdict, code, "\n".join(lines), False
    # Several bundles: one line each, the verdict and why not ("failed at STEP: CODE: ...").
    why = [line.strip() for line in lines[1:]]
    if why and why[0].startswith(verdict):
        return verdict, code, f"{source}: " + "; ".join(why), False
    return verdict, code, ": ".join([lines[0], "; ".join(why)]) if why else lines[0], False


class _Tally:
    """The counts a run prints at its end: constant size, however many results (ADR 0023)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = dict.fromkeys(VERDICTS, 0)
        self.codes: dict[str, int] = {}
        self.skipped = 0

    def add(self, verdict: str, code: str | None) -> None:
        if verdict == "skipped":
            self.skipped += 1
            return
        self.counts[verdict] += 1
        if code is not None:
            self.codes[code] = self.codes.get(code, 0) + 1

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def verdict(self) -> str:
        """The worst verdict (``verified`` when there is none), as :class:`Report`'s."""
        return max((v for v in VERDICTS if self.counts[v]), key=VERDICTS.index, default="verified")

    def summary(self) -> dict[str, Any]:
        """:meth:`Report.summary`'s fields, and ``skipped``."""
        by_code = dict(sorted(self.codes.items()))
        return {"total": self.total, **self.counts, "by_code": by_code, "skipped": self.skipped}


def _stream(
    items: list[tuple[str, bool]],
    jobs: int,
    raw_keys: list[bytes],
    settings: _Settings,
    trust: TrustRoot,
) -> int:
    """Verify every input, printing each result as it is decided, in input order; then the
    summary. Returns the exit code, the worst verdict's (specs/verify-result.schema.json)."""
    out = sys.stdout
    output = settings.output
    tally = _Tally()
    progress = Progress(len(items), lines_on_stdout=True)
    first = True
    # --json: the document's head goes out with the first result, which the rest follow as they
    # come (ADR 0023); a run with no bundle at all prints no document, only its error.
    head = f'{{\n  "verify_result_version": "{RESULT_VERSION}",\n  "kind": "bundle",\n'
    head += '  "results": ['
    decided = map_in_workers(
        _decide,
        items,
        jobs=jobs,
        initializer=_init_worker,
        initargs=(raw_keys, settings),
        max_chunk=256,
        chunks_per_worker=4,
    )
    try:
        for verdict, code, text, to_stderr in decided:
            tally.add(verdict, code)
            progress.tick()
            if to_stderr:
                click.echo(text, err=True)
            elif output == "json":
                out.write((head + "\n" if first else ",\n") + text)
                first = False
            else:
                out.write(text + "\n")
        if tally.total == 0:  # every input skipped: nothing verified is never a pass
            raise errors.UsageError(
                f"no bundle in the given inputs ({tally.skipped} JSON file(s) skipped: not bundles)"
            )
        summary = tally.summary()
        tail = {"verdict": tally.verdict, "summary": summary, "trust": trust.to_json()}
        if output == "json":
            out.write("\n  ]")
            out.write(",\n" + json.dumps(tail, indent=2, ensure_ascii=False)[2:] + "\n")
        elif output == "jsonl":
            line = {"verify_result_version": RESULT_VERSION, "kind": "bundle", **tail}
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
        elif tally.total > 1 or (tally.total == 1 and summary["unreadable"] == 0):
            parts = ", ".join(f"{summary[v]} {v}" for v in VERDICTS if summary[v])
            out.write(f"{tally.total} bundle(s): {parts or 'none'}\n")
            if tally.total > 1 and tally.codes:
                codes = ", ".join(f"{code} {n}" for code, n in summary["by_code"].items())
                out.write(f"by code: {codes}\n")
        out.flush()
    except BrokenPipeError:
        # The reader went away (``| head``): stop, quietly, the workers with us; what is still
        # buffered goes nowhere (Python's signal docs, "Note on SIGPIPE"). Not every input was
        # decided, so never 0 (ADR 0023).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())
        return 2
    finally:
        decided.close()  # with workers: the pool shut down now, not when collected
    if tally.skipped:
        click.echo(f"note: {tally.skipped} file(s) skipped: not bundles", err=True)
    return VERDICT_EXIT[tally.verdict]


def _finish_one(result: Result, output: str, trust: TrustRoot) -> int:
    """Print one bundle's report in ``output``'s form (``--jsonl``: its line, then the summary
    line, as :func:`_stream` prints them); return its exit code."""
    if output != "jsonl":
        report, extra = Report("bundle", (result,)), {"trust": trust.to_json()}
        for text, to_stderr in outcome_blocks(report, as_json=output == "json", extra=extra):
            click.echo(text, err=to_stderr)
        return result.exit_code
    tally = _Tally()
    tally.add(result.verdict, result.code)
    click.echo(json.dumps(result.document(), ensure_ascii=False))
    tail = {"verdict": tally.verdict, "summary": tally.summary(), "trust": trust.to_json()}
    click.echo(json.dumps({"verify_result_version": RESULT_VERSION, "kind": "bundle", **tail}))
    return result.exit_code


def _run_attested(  # noqa: PLR0917 - the verification's context, then the VSA's
    paths: list[str],
    trust: TrustRoot,
    settings: _Settings,
    policy_bytes: bytes | None,
    key_file: str,
    vsa_out: str,
) -> int:
    """``verify bundle --attest-result KEYFILE --out VSA``: verify one bundle, print the report,
    then write the verdict, PASSED or FAILED alike, as a signed SLSA VSA v1
    (:mod:`affidavit.attest.intoto.vsa`); an input with no ``deal_id`` gets none (a note says
    why). Only this path imports attest.intoto and the key loader (~25 ms, ADR 0022)."""
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
        return _finish_one(_VERIFIER.unreadable(path, e), settings.output, trust)
    result: Result = _VERIFIER.verify_bytes(data, source=path)
    code = _finish_one(result, settings.output, trust)
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
