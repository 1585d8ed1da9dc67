"""``affidavit verify bundle`` and ``affidavit verify attestation``: offline, fail-closed.

Exit codes: 0 every input verified, 1 some input not verified (failed or unanchored), 2 some input
unreadable (bad JSON, not a bundle, missing file) or bad usage. With several inputs the largest
code wins. ``--json`` prints one document (``specs/verify-result.schema.json``).

Trust comes only from the caller: ``--public-key-base64 K`` (repeatable), ``--publisher-doc F``
or ``--public-key F`` (a JSON document with ``public_key_base64`` as aigentsy-verify takes it, a
PEM, or base64 text) or ``--trusted-keys DIR`` (every ``*.pub``, ``*.json`` and ``*.pem`` there).
Without one, a self-consistent bundle is ``unanchored``, never verified. ``--strict`` is accepted
for aigentsy-verify scripts and changes nothing: Affidavit is always strict.

Actor signatures verify ``ok`` only under keys the caller trusts (``--trusted-actor-keys PATH``: a
folder of key files, or a pinned key-directory JSON); under keys only the bundle carries they are
``self_asserted``. ``--require-actor-signatures`` fails a bundle unless every event is signed
under a caller-trusted key. ``--profile swarm-strict`` adds the swarm coverage, snapshot and
decision steps (docs/adr/0008-actor-keys-and-events-after-finality.md).

Start-up is kept small (performance.md): the verifier is imported when the command runs, and
nothing on this path imports jsonschema, httpx or cryptography (unless a PEM key is read).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from affidavit.cli._input import read_input
from affidavit.verify import errors

if TYPE_CHECKING:
    import click

__all__ = ["OPTIONS", "Option", "fast_main", "parse_fast"]  # + bundle, attestation (lazy)

RESULT_VERSION: Final = "1.0.0"
_KEY_SUFFIXES: Final = (".pub", ".json", ".pem")
_VERDICTS: Final = ("verified", "unanchored", "failed", "unreadable")
_EXIT: Final = {"verified": 0, "unanchored": 1, "failed": 1, "unreadable": 2}


# -- the options, declared once: they build both the click commands and the fast parser ---------


class Option(NamedTuple):
    """One command-line option. ``kind``: text, file, folder, path (file or folder), choice,
    jobs (1..64) or flag."""

    flag: str
    dest: str
    kind: str
    help: str
    multiple: bool = False
    metavar: str | None = None
    choices: tuple[str, ...] = ()  # kind "choice": the first is the default


OPTIONS: Final = {
    "key": (
        Option("--public-key-base64", "keys_b64", "text",
               "A trusted Ed25519 public key, standard base64 (repeatable).", multiple=True),
        Option("--publisher-doc", "publisher_docs", "file",
               "Publisher document (JSON with public_key_base64) whose key is trusted.",
               multiple=True),
        Option("--public-key", "public_key_files", "file",
               "A trusted log key file: JSON key document ({\"public_key_base64\": ...}, as"
               " aigentsy-verify takes), PEM, or base64 text (repeatable).", multiple=True,
               metavar="FILE"),
        Option("--trusted-keys", "trusted_dir", "folder",
               "Folder of trusted public keys (*.pub, *.json, *.pem)."),
        Option("--fetch-key", "fetch_urls", "text",
               "Fetch a trusted key from a registry or publisher document URL (explicit network"
               " use; pin the key afterwards).", multiple=True, metavar="URL"),
    ),
    "bundle": (
        Option("--strict", "strict", "flag",
               "Accepted for aigentsy-verify scripts; no effect: verification is always strict"
               " (no trusted tree-head key means not verified)."),
        Option("--profile", "profile", "choice",
               "Verification profile: default, or swarm-strict (every designated swarm event"
               " signed by an enrolled, valid actor key).", choices=("default", "swarm-strict")),
        Option("--trusted-actor-keys", "actor_keys_path", "path",
               "Actor keys the caller trusts: a folder of key files (*.pub, *.json, *.pem; a"
               " JSON document with actor_id binds the key to that actor) or a pinned key"
               " directory JSON. Without it actor signatures are only self_asserted.",
               metavar="PATH"),
        Option("--require-actor-signatures", "require_actor", "flag",
               "Fail unless every event carries an actor signature under a caller-trusted key."),
    ),
    "jobs": (Option("--jobs", "jobs", "jobs", "Worker processes."),),
    "json": (Option("--json", "as_json", "flag", "Print one JSON document to stdout."),),
}  # fmt: skip
_JOBS_RANGE: Final = (1, 64)
# command -> (option groups, positional argument name, takes several positionals)
_COMMANDS: Final = {
    "bundle": (("key", "bundle", "jobs", "json"), "inputs", True),
    "attestation": (("key", "json"), "source", False),
}


def _options_for(command: str) -> list[Option]:
    groups, _, _ = _COMMANDS[command]
    return [option for group in groups for option in OPTIONS[group]]


def _defaults(command: str) -> dict[str, Any]:
    """The value of every option when it is not given (what click passes)."""
    values: dict[str, Any] = {}
    for option in _options_for(command):
        if option.multiple:
            values[option.dest] = ()
        else:
            values[option.dest] = {"jobs": 1, "flag": False}.get(option.kind)
            if option.kind == "choice":
                values[option.dest] = option.choices[0]
    return values


# -- the click-free fast path (cold start, issue 4 item 9) ---------------------------------------


def _fast_value(option: Option, text: str) -> Any:
    """``text`` converted as click would, or ``None`` where click would complain (fall back)."""
    if option.kind == "jobs":
        ok = text.isascii() and text.isdigit() and _JOBS_RANGE[0] <= int(text) <= _JOBS_RANGE[1]
        return int(text) if ok else None
    if option.kind == "file" and os.path.isdir(text):
        return None  # click.Path(dir_okay=False) refuses it: let click word the error
    if option.kind == "folder" and os.path.isfile(text):
        return None
    if option.kind == "choice" and text not in option.choices:
        return None
    return text


def parse_fast(command: str, argv: Sequence[str]) -> dict[str, Any] | None:
    """Parse ``argv`` (after ``verify <command>``) into the click keyword arguments.

    Returns ``None`` for anything not fully understood (``--help``, unknown or repeated flags,
    missing values, bad numbers, a missing input), so the caller hands the line to click.
    """
    by_flag = {option.flag: option for option in _options_for(command)}
    values = _defaults(command)
    positional: list[str] = []
    seen: set[str] = set()
    items, index = list(argv), 0
    while index < len(items):
        token = items[index]
        index += 1
        if token == "-" or not token.startswith("-"):  # noqa: S105 - "-" is stdin, not a secret
            positional.append(token)
            continue
        flag, has_inline, inline = token.partition("=")
        option = by_flag.get(flag)
        if option is None or (option.kind == "flag" and has_inline):
            return None  # --help, --, unknown flags, --json=...: click decides
        if option.kind == "flag":
            values[option.dest] = True
            continue
        if not has_inline:
            if index >= len(items):
                return None
            inline, index = items[index], index + 1
        value = _fast_value(option, inline)
        if value is None or (not option.multiple and flag in seen):
            return None
        seen.add(flag)
        values[option.dest] = (*values[option.dest], value) if option.multiple else value
    _, name, several = _COMMANDS[command]
    if not positional or (len(positional) > 1 and not several):
        return None
    values[name] = tuple(positional) if several else positional[0]
    return values


def fast_main(command: str, argv: Sequence[str]) -> int | None:
    """Run ``verify <command>`` without click; ``None`` when click must handle ``argv``.

    Output and exit codes are the click path's, byte for byte (tests/cli/test_cold_start.py):
    both call the same ``_run_*`` function, and failures print the group's one-line error.
    """
    values = parse_fast(command, argv)
    if values is None:
        return None
    run: Callable[..., int] = _run_bundle if command == "bundle" else _run_attestation
    try:
        return run(**values)
    except errors.AffidavitError as e:
        return _print_error(e)
    except OSError as e:
        return _print_error(
            errors.ParseError("io.unreadable", f"{e.filename or 'input'}: {e.strerror or e}")
        )


def _print_error(error: errors.AffidavitError) -> int:
    from affidavit.cli.main import format_error  # noqa: PLC0415 - main imports this module lazily

    _echo(format_error(error), err=True)
    return error.exit_code


# -- input and output without click --------------------------------------------------------------


def _echo(text: str, *, err: bool = False) -> None:
    """``click.echo`` for text: the line, a newline, flushed."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n")
    stream.flush()


def _trusted_keys(
    keys_b64: Sequence[str],
    publisher_docs: Sequence[str],
    trusted_dir: str | None,
    fetch_urls: Sequence[str] = (),
    public_key_files: Sequence[str] = (),
) -> list[bytes]:
    """Raw 32-byte keys from the key options (validated; a bad key is exit 2).

    ``--fetch-key`` is the only network path of this command: one GET per URL, only when given.
    """
    from affidavit.verify.crypto.keys import Ed25519PublicKey  # noqa: PLC0415 - lazy (cold start)

    keys = [Ed25519PublicKey.from_b64(text.strip()).raw for text in keys_b64]
    if publisher_docs or public_key_files or trusted_dir is not None:
        keys.extend(_file_keys((*publisher_docs, *public_key_files), trusted_dir))
    if fetch_urls:
        from affidavit.registry.clients.registry import fetch_public_key  # noqa: PLC0415 - explicit network

        for url in fetch_urls:
            fetched = fetch_public_key(url)
            _echo(f"note: trusting key {fetched.b64} fetched from {url}; pin it", err=True)
            keys.append(fetched.raw)
    return list(dict.fromkeys(keys))


def _file_keys(publisher_docs: Sequence[str], trusted_dir: str | None) -> list[bytes]:
    """Raw keys from ``--publisher-doc`` files and a ``--trusted-keys`` folder.

    Only these options import pathlib and the key-file reader (cold start, docs/adr/0003).
    """
    from pathlib import Path  # noqa: PLC0415 - lazy (cold start: pathlib costs ~4 ms)

    from affidavit.attest.keyring import load_public_key  # noqa: PLC0415 - lazy (cold start)

    paths = [Path(p) for p in publisher_docs]
    if trusted_dir is not None:
        folder = Path(trusted_dir)
        if not folder.is_dir():
            raise errors.ParseError("io.unreadable", f"{folder}: not a folder")
        found = sorted(p for p in folder.iterdir() if p.suffix in _KEY_SUFFIXES and p.is_file())
        if not found:
            raise errors.UsageError(f"{folder}: no *.pub, *.json or *.pem key files (fail closed)")
        paths.extend(found)
    return [load_public_key(path).raw for path in paths]


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


# -- work (runs in this process or in --jobs worker processes) ---------------------------------

_VERIFIER: Any = None


class _Settings(NamedTuple):
    """What a verifier needs besides the log keys (picklable: sent to --jobs workers)."""

    actor_keys: tuple[Any, ...] = ()  # TrustedActorKey tuples (verify.bundle_actor_trust)
    require_actor: bool = False
    profile: str = "default"


_DEFAULT_SETTINGS: Final = _Settings()


def _init_worker(raw_keys: list[bytes], settings: _Settings = _DEFAULT_SETTINGS) -> None:
    from affidavit.verify.bundles.verifier import BundleVerifier  # noqa: PLC0415 - lazy (cold start)
    from affidavit.verify.crypto.keys import Ed25519PublicKey  # noqa: PLC0415 - lazy (cold start)

    trust = None
    if settings.actor_keys:
        from affidavit.verify.bundles.actor_trust import ActorTrust  # noqa: PLC0415 - lazy

        trust = ActorTrust(settings.actor_keys)
    global _VERIFIER  # noqa: PLW0603 - one verifier per process, so head checks are memoized
    _VERIFIER = BundleVerifier(
        [Ed25519PublicKey(raw) for raw in raw_keys],
        actor_trust=trust,
        require_actor_signatures=settings.require_actor,
        profile=settings.profile,
    )


def _actor_keys(path: str | None) -> tuple[Any, ...]:
    """``--trusted-actor-keys``: a folder of key files or a pinned key-directory JSON file.

    Key files are read with the strict key loader (attest.keyring.load_public_key); a JSON file
    with ``actor_id`` binds its key to that actor; a JSON file without ``public_key_base64`` is
    read as a pinned key directory. An empty folder is refused (fail closed).
    """
    if path is None:
        return ()
    from pathlib import Path  # noqa: PLC0415 - lazy (cold start)

    from affidavit.attest.keyring import load_public_key  # noqa: PLC0415 - lazy (cold start)
    from affidavit.verify.bundles.actor_trust import (  # noqa: PLC0415 - lazy (cold start)
        ActorTrust,
        TrustedActorKey,
    )
    from affidavit.verify.json.strict import loads  # noqa: PLC0415 - lazy (cold start)

    target = Path(path)
    if target.is_file():
        return ActorTrust.from_directory(loads(read_input(path)), source=path).keys
    if not target.is_dir():
        raise errors.ParseError("io.unreadable", f"{target}: no such file or folder")
    found = sorted(p for p in target.iterdir() if p.suffix in _KEY_SUFFIXES and p.is_file())
    if not found:
        raise errors.UsageError(f"{target}: no *.pub, *.json or *.pem key files (fail closed)")
    keys: list[Any] = []
    for file in found:
        document = loads(read_input(str(file))) if file.suffix == ".json" else None
        if isinstance(document, dict) and "public_key_base64" not in document:
            keys.extend(ActorTrust.from_directory(document, source=str(file)).keys)
            continue
        actor = document.get("actor_id") if isinstance(document, dict) else None
        if actor is not None and (not isinstance(actor, str) or not actor):
            raise errors.UsageError(f"{file}: actor_id must be a non-empty string")
        keys.append(TrustedActorKey(load_public_key(file).raw, actor))
    return tuple(keys)


def _unreadable(source: str, error: errors.AffidavitError, kind: str) -> dict[str, Any]:
    step = {"name": "parse", "status": "failed", "code": error.code, "message": error.message}
    return {
        "kind": kind,
        "source": source,
        "verdict": "unreadable",
        "verified": False,
        "steps": [step],
        "code": error.code,
        "message": error.message,
    }


def _verify_one(source: str) -> dict[str, Any]:
    try:
        data = read_input(source)
    except errors.AffidavitError as e:
        return _unreadable(source, e, "bundle")
    result: dict[str, Any] = _VERIFIER.verify_bytes(data, source=source).to_json()
    return result


def _verify_all(
    paths: list[str], raw_keys: list[bytes], jobs: int, settings: _Settings = _DEFAULT_SETTINGS
) -> Iterator[dict[str, Any]]:
    if jobs <= 1 or len(paths) < 2:
        _init_worker(raw_keys, settings)
        yield from map(_verify_one, paths)
        return
    from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415 - lazy (cold start)

    chunk = max(1, min(256, len(paths) // (jobs * 4)))
    init = (raw_keys, settings)
    with ProcessPoolExecutor(jobs, initializer=_init_worker, initargs=init) as pool:
        yield from pool.map(_verify_one, paths, chunksize=chunk)


# -- output -------------------------------------------------------------------------------------


def _summary(results: Sequence[dict[str, Any]]) -> dict[str, int]:
    counts = dict.fromkeys(_VERDICTS, 0)
    for result in results:
        counts[result["verdict"]] += 1
    return {"total": len(results), **counts}


def _describe(result: dict[str, Any], detailed: bool) -> list[str]:
    lines = [f"{result['source']}: {result['verdict']}"]
    if detailed:
        for step in result["steps"]:
            extra = step.get("code") or step.get("message") or ""
            lines.append(f"  {step['name']:<24} {step['status']:<13} {extra}".rstrip())
        if result.get("profile", "default") != "default":
            lines.append(f"  profile: {result['profile']}")
        lines.extend(f"  warning: {w}" for w in result.get("warnings", []))
        if "policy_layer" in result:
            from affidavit.verify.bundles.policy_layer import (  # noqa: PLC0415 - lazy
                describe_policy_layer,
            )

            lines.extend(describe_policy_layer(result["policy_layer"]))
    if result["verdict"] == "failed":
        failing = next(s for s in result["steps"] if s["status"] == "failed")
        lines.append(f"  failed at {failing['name']}: {failing['code']}: {failing['message']}")
    elif result["verdict"] == "unanchored":
        lines.append(f"  {result['code']}: {result['message']}")
    return lines


class _Progress:
    """A one-line progress bar on stderr, only when stderr is a terminal."""

    def __init__(self, total: int) -> None:
        self.total, self.done = total, 0
        self.enabled = total > 1 and sys.stderr.isatty()

    def tick(self) -> None:
        self.done += 1
        if self.enabled and (self.done == self.total or self.done % 50 == 0):
            filled = 30 * self.done // self.total
            bar = "#" * filled + "." * (30 - filled)
            sys.stderr.write(f"\r[{bar}] {self.done}/{self.total}")
            if self.done == self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


def _finish(results: list[dict[str, Any]], as_json: bool, kind: str, detailed: bool) -> int:
    """Print the results; return the exit code (the largest of the verdicts')."""
    summary = _summary(results)
    if as_json:
        document = {"verify_result_version": RESULT_VERSION, "kind": kind, "results": results,
                    "summary": summary}  # fmt: skip
        _echo(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        for result in results:
            if result["verdict"] == "unreadable":
                # Input that cannot be read is one line on stderr, as for every command.
                source = (
                    f"{result['source']}: " if result["source"] not in result["message"] else ""
                )
                _echo(f"error: {result['code']}: {source}{result['message']}", err=True)
            elif detailed or result["verdict"] != "verified":
                _echo("\n".join(_describe(result, detailed)))
        if len(results) > 1 or summary["unreadable"] == 0:
            parts = ", ".join(f"{summary[v]} {v}" for v in _VERDICTS if summary[v])
            _echo(f"{summary['total']} {kind}(s): {parts}")
    return max((_EXIT[r["verdict"]] for r in results), default=0)


def _run_bundle(  # noqa: PLR0917 - one parameter per option
    inputs: tuple[str, ...],
    fetch_urls: tuple[str, ...],
    keys_b64: tuple[str, ...],
    publisher_docs: tuple[str, ...],
    public_key_files: tuple[str, ...],
    trusted_dir: str | None,
    strict: bool,  # noqa: ARG001 - accepted for aigentsy-verify scripts: always strict here
    profile: str,
    actor_keys_path: str | None,
    require_actor: bool,
    jobs: int,
    as_json: bool,
) -> int:
    raw_keys = _trusted_keys(keys_b64, publisher_docs, trusted_dir, fetch_urls, public_key_files)
    settings = _Settings(_actor_keys(actor_keys_path), require_actor, profile)
    paths = _expand(inputs)
    if not paths:
        raise errors.UsageError("no bundle files found in the given inputs")
    progress = _Progress(len(paths))
    results = []
    for result in _verify_all(paths, raw_keys, min(jobs, os.cpu_count() or 1), settings):
        results.append(result)
        progress.tick()
    return _finish(results, as_json, "bundle", detailed=len(paths) == 1)


def _run_attestation(  # noqa: PLR0917 - one parameter per option
    source: str,
    fetch_urls: tuple[str, ...],
    keys_b64: tuple[str, ...],
    publisher_docs: tuple[str, ...],
    public_key_files: tuple[str, ...],
    trusted_dir: str | None,
    as_json: bool,
) -> int:
    from affidavit.verify.bundles.attestation import verify_attestation  # noqa: PLC0415 - lazy (cold start)
    from affidavit.verify.crypto.keys import Ed25519PublicKey  # noqa: PLC0415 - lazy (cold start)
    from affidavit.verify.json.strict import loads  # noqa: PLC0415 - lazy (cold start)

    raw_keys = _trusted_keys(keys_b64, publisher_docs, trusted_dir, fetch_urls, public_key_files)
    try:
        document = loads(read_input(source))
    except errors.AffidavitError as e:
        result = _unreadable(source, e, "attestation")
    else:
        keys = [Ed25519PublicKey(raw) for raw in raw_keys]
        result = verify_attestation(document, keys, source=source).to_json()
    return _finish([result], as_json, "attestation", detailed=True)


# -- the click commands (built on first access, so the fast path never imports click) -----------

_DOCS: Final = {
    "bundle": "Verify ProofPack bundles (files, or folders of *.json) offline.\n\n"
    "Verified only when every part checks and the tree head is signed by a trusted key.",
    "attestation": (
        "Verify an OutcomeAttestation: payload hash, then the signature under a trusted key."
    ),
}


def _click_command(command: str) -> click.Command:
    """The click command for ``command``, its options built from :data:`OPTIONS`."""
    import click  # noqa: PLC0415 - lazy (cold start)

    run: Callable[..., int] = _run_bundle if command == "bundle" else _run_attestation

    def callback(**values: Any) -> None:
        code = run(**values)
        if code:
            click.get_current_context().exit(code)

    _, name, several = _COMMANDS[command]
    params: list[click.Parameter] = [
        click.Argument([name], nargs=-1 if several else 1, required=True)
    ]
    params.extend(_click_option(option) for option in _options_for(command))
    return click.Command(command, callback=callback, params=params, help=_DOCS[command])


def _click_option(option: Option) -> click.Option:
    import click  # noqa: PLC0415 - lazy (cold start)

    if option.kind == "flag":
        return click.Option([option.flag, option.dest], is_flag=True, help=option.help)
    types = {
        "jobs": click.IntRange(*_JOBS_RANGE),
        "file": click.Path(dir_okay=False),
        "folder": click.Path(file_okay=False),
        "path": click.Path(),
        "choice": click.Choice(option.choices),
        "text": None,
    }
    extra: dict[str, Any] = {"default": 1} if option.kind == "jobs" else {}
    if option.kind == "choice":
        extra = {"default": option.choices[0], "show_default": True}
    return click.Option(
        [option.flag, option.dest],
        type=types[option.kind],
        multiple=option.multiple,
        metavar=option.metavar,
        help=option.help,
        **extra,
    )


def __getattr__(name: str) -> Any:
    """``bundle`` and ``attestation`` (click commands) are built on first access (PEP 562)."""
    if name in _COMMANDS:
        command = _click_command(name)
        globals()[name] = command
        return command
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
