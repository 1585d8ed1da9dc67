"""``affidavit verify bundle`` and ``affidavit verify attestation``: offline, fail-closed.

Exit codes: 0 every input verified, 1 some input not verified (failed or unanchored), 2 some input
unreadable (bad JSON, not a bundle, missing file) or bad usage. With several inputs the largest
code wins. ``--json`` prints one document (``specs/verify-result.schema.json``).

Trust comes only from the caller: ``--public-key-base64 K`` (repeatable), ``--publisher-doc F``
(a JSON document with ``public_key_base64``) or ``--trusted-keys DIR`` (every ``*.pub``, ``*.json``
and ``*.pem`` there). Without one, a self-consistent bundle is ``unanchored``, never verified.

Start-up is kept small (performance.md): the verifier is imported when the command runs, and
nothing on this path imports jsonschema, httpx or cryptography (unless a PEM key is read).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final

import click
from affidavit.cli._common import emit_json, json_option, read_input
from affidavit.verify import errors

__all__ = ["attestation", "bundle"]

RESULT_VERSION: Final = "1.0.0"
_KEY_SUFFIXES: Final = (".pub", ".json", ".pem")
_VERDICTS: Final = ("verified", "unanchored", "failed", "unreadable")
_EXIT: Final = {"verified": 0, "unanchored": 1, "failed": 1, "unreadable": 2}


def _key_options(f: Any) -> Any:
    f = click.option(
        "--fetch-key",
        "fetch_urls",
        multiple=True,
        metavar="URL",
        help="Fetch a trusted key from a registry or publisher document URL (explicit network use;"
        " pin the key afterwards).",
    )(f)
    f = click.option(
        "--trusted-keys",
        "trusted_dir",
        type=click.Path(file_okay=False),
        help="Folder of trusted public keys (*.pub, *.json, *.pem).",
    )(f)
    f = click.option(
        "--publisher-doc",
        "publisher_docs",
        multiple=True,
        type=click.Path(dir_okay=False),
        help="Publisher document (JSON with public_key_base64) whose key is trusted.",
    )(f)
    return click.option(
        "--public-key-base64",
        "keys_b64",
        multiple=True,
        help="A trusted Ed25519 public key, standard base64 (repeatable).",
    )(f)


def _trusted_keys(
    keys_b64: Sequence[str],
    publisher_docs: Sequence[str],
    trusted_dir: str | None,
    fetch_urls: Sequence[str] = (),
) -> list[bytes]:
    """Raw 32-byte keys from the key options (validated; a bad key is exit 2).

    ``--fetch-key`` is the only network path of this command: one GET per URL, only when given.
    """
    from affidavit.verify.keys import Ed25519PublicKey  # noqa: PLC0415 - lazy (cold start)

    keys = [Ed25519PublicKey.from_b64(text.strip()).raw for text in keys_b64]
    paths = [Path(p) for p in publisher_docs]
    if trusted_dir is not None:
        folder = Path(trusted_dir)
        if not folder.is_dir():
            raise errors.FileReadError(f"{folder}: not a folder")
        found = sorted(p for p in folder.iterdir() if p.suffix in _KEY_SUFFIXES and p.is_file())
        if not found:
            raise errors.UsageError(f"{folder}: no *.pub, *.json or *.pem key files (fail closed)")
        paths.extend(found)
    if paths:
        from affidavit.attest.keyring import load_public_key  # noqa: PLC0415 - lazy (cold start)

        keys.extend(load_public_key(path).raw for path in paths)
    if fetch_urls:
        from affidavit.registry.client import fetch_public_key  # noqa: PLC0415 - explicit network

        for url in fetch_urls:
            fetched = fetch_public_key(url)
            click.echo(f"note: trusting key {fetched.b64} fetched from {url}; pin it", err=True)
            keys.append(fetched.raw)
    return list(dict.fromkeys(keys))


def _expand(inputs: Iterable[str]) -> list[str]:
    """Files as given; a folder stands for its ``*.json`` files, sorted."""
    out: list[str] = []
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            out.extend(str(p) for p in sorted(path.glob("*.json")) if p.is_file())
        else:
            out.append(item)
    return out


# -- work (runs in this process or in --jobs worker processes) ---------------------------------

_VERIFIER: Any = None


def _init_worker(raw_keys: list[bytes]) -> None:
    from affidavit.verify.bundle import BundleVerifier  # noqa: PLC0415 - lazy (cold start)
    from affidavit.verify.keys import Ed25519PublicKey  # noqa: PLC0415 - lazy (cold start)

    global _VERIFIER  # noqa: PLW0603 - one verifier per process, so head checks are memoized
    _VERIFIER = BundleVerifier([Ed25519PublicKey(raw) for raw in raw_keys])


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


def _verify_all(paths: list[str], raw_keys: list[bytes], jobs: int) -> Iterator[dict[str, Any]]:
    if jobs <= 1 or len(paths) < 2:
        _init_worker(raw_keys)
        yield from map(_verify_one, paths)
        return
    from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415 - lazy (cold start)

    chunk = max(1, min(256, len(paths) // (jobs * 4)))
    with ProcessPoolExecutor(jobs, initializer=_init_worker, initargs=(raw_keys,)) as pool:
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
            lines.append(f"  {step['name']:<24} {step['status']:<12} {extra}".rstrip())
        lines.extend(f"  warning: {w}" for w in result.get("warnings", []))
    if result["verdict"] == "failed":
        failing = next(s for s in result["steps"] if s["status"] == "failed")
        lines.append(f"  failed at {failing['name']}: {failing['code']}: {failing['message']}")
    elif result["verdict"] in ("unanchored", "unreadable"):
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


def _finish(results: list[dict[str, Any]], as_json: bool, kind: str, detailed: bool) -> None:
    summary = _summary(results)
    if as_json:
        emit_json({"verify_result_version": RESULT_VERSION, "kind": kind, "results": results,
                   "summary": summary})  # fmt: skip
    else:
        for result in results:
            if detailed or result["verdict"] != "verified":
                click.echo("\n".join(_describe(result, detailed)))
        parts = ", ".join(f"{summary[v]} {v}" for v in _VERDICTS if summary[v])
        click.echo(f"{summary['total']} {kind}(s): {parts}")
    code = max((_EXIT[r["verdict"]] for r in results), default=0)
    if code:
        click.get_current_context().exit(code)


@click.command("bundle")
@click.argument("inputs", nargs=-1, required=True)
@_key_options
@click.option("--jobs", type=click.IntRange(1, 64), default=1, help="Worker processes.")
@json_option
def bundle(  # noqa: PLR0917 - one parameter per click option
    inputs: tuple[str, ...],
    fetch_urls: tuple[str, ...],
    keys_b64: tuple[str, ...],
    publisher_docs: tuple[str, ...],
    trusted_dir: str | None,
    jobs: int,
    as_json: bool,
) -> None:
    """Verify ProofPack bundles (files, or folders of *.json) offline.

    Verified only when every part checks and the tree head is signed by a trusted key.
    """
    raw_keys = _trusted_keys(keys_b64, publisher_docs, trusted_dir, fetch_urls)
    paths = _expand(inputs)
    if not paths:
        raise errors.UsageError("no bundle files found in the given inputs")
    progress = _Progress(len(paths))
    results = []
    for result in _verify_all(paths, raw_keys, min(jobs, os.cpu_count() or 1)):
        results.append(result)
        progress.tick()
    _finish(results, as_json, "bundle", detailed=len(paths) == 1)


@click.command("attestation")
@click.argument("source")
@_key_options
@json_option
def attestation(  # noqa: PLR0917 - one parameter per click option
    source: str,
    fetch_urls: tuple[str, ...],
    keys_b64: tuple[str, ...],
    publisher_docs: tuple[str, ...],
    trusted_dir: str | None,
    as_json: bool,
) -> None:
    """Verify an OutcomeAttestation: payload hash, then the signature under a trusted key."""
    from affidavit.verify.attestation import verify_attestation  # noqa: PLC0415 - lazy (cold start)
    from affidavit.verify.jsonio import loads  # noqa: PLC0415 - lazy (cold start)
    from affidavit.verify.keys import Ed25519PublicKey  # noqa: PLC0415 - lazy (cold start)

    raw_keys = _trusted_keys(keys_b64, publisher_docs, trusted_dir, fetch_urls)
    try:
        document = loads(read_input(source))
    except errors.AffidavitError as e:
        result = _unreadable(source, e, "attestation")
    else:
        keys = [Ed25519PublicKey(raw) for raw in raw_keys]
        result = verify_attestation(document, keys, source=source).to_json()
    _finish([result], as_json, "attestation", detailed=True)
