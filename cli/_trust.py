"""The trust options of every verify verb, declared once, and the one reader of what they name
(style.md §16, docs/adr/0016-one-trust-input.md). ``--strict`` is accepted for aigentsy-verify
scripts: a verdict always needs a signature proven under a trusted key.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import click
from affidavit.attest.host import read_key_bytes
from affidavit.cli._common import option_group
from affidavit.verify import errors
from affidavit.verify.crypto.trusted_keys import TrustedKey, key_from_base64, parse_key_bytes
from affidavit.verify.trust import KeyFile, Skipped, TrustRoot, name_claims_key

__all__ = [
    "folder_files",
    "read_folder",
    "read_key_file",
    "read_key_path",
    "read_trust",
    "trust_options",
]

# The trust options, in the order --help lists them; the command receives them as keyword arguments
# (``keys_b64``, ``key_files``, ...) to pass on to :func:`read_trust`.
trust_options = option_group(
    click.option(
        "--public-key-base64",
        "--log-key-base64",
        "keys_b64",
        multiple=True,
        metavar="KEY",
        help="A trusted Ed25519 public key, standard base64 (repeatable).",
    ),
    click.option(
        "--public-key",
        "--publisher-doc",
        "--log-key",
        "key_files",
        type=click.Path(dir_okay=False),
        multiple=True,
        metavar="FILE",
        help='A trusted key file: JSON key document ({"public_key_base64": ...}, e.g. a publisher'
        " document), PEM, base64 text or a C2SP verifier key (repeatable).",
    ),
    click.option(
        "--trusted-keys",
        "key_dirs",
        type=click.Path(file_okay=False),
        multiple=True,
        metavar="DIR",
        help="A folder of trusted keys (*.pub, *.pem, *.json key documents); other files are"
        " skipped and listed in --json (repeatable).",
    ),
    click.option(
        "--vkey",
        "vkeys",
        multiple=True,
        metavar="VKEY",
        help="A trusted C2SP verifier key name+keyid+base64, or a key file or folder (repeatable).",
    ),
    click.option(
        "--fetch-key",
        "fetch_urls",
        multiple=True,
        metavar="URL",
        help="Fetch a trusted key from a registry or publisher document URL (explicit network"
        " use; pin the key afterwards).",
    ),
    click.option(
        "--strict",
        is_flag=True,
        help="Accepted for aigentsy-verify scripts: a verdict always needs a signature proven"
        " under a trusted key (no trusted key: not verified).",
    ),
)


def read_trust(
    *,
    keys_b64: Iterable[str] = (),
    key_files: Iterable[str] = (),
    key_dirs: Iterable[str] = (),
    vkeys: Iterable[str] = (),
    fetch_urls: Iterable[str] = (),
    strict: bool = False,  # noqa: ARG001 - always strict (module docstring)
    windows: bool = False,
    needed_by: str | None = None,
) -> TrustRoot:
    """Every key the trust options name. ``windows``: the verb honours validity windows (else a
    windowed key is ``key.window_unsupported``). ``needed_by``: the verb refuses to run without a
    key (fail closed, style.md §7); what none means otherwise is each verb's (ADR 0016).

    Raises:
        ``key.*``, ``json.*``, ``io.unreadable``: a key file or folder that cannot be read, or
            a file claiming to be a key that is malformed.
        ``usage.invalid``: a folder holding no key; no key at all when ``needed_by``.
        ``net.*``: the key document could not be fetched (unreachable, too slow, a bad answer).
    """
    roots = [
        _one(TrustedKey(key_from_base64(text), f"--public-key-base64 #{n}", "base64"))
        for n, text in enumerate(keys_b64, 1)
    ]
    roots.extend(read_key_file(path, windows=windows) for path in key_files)
    roots.extend(read_folder(path, windows=windows) for path in key_dirs)
    roots.extend(_vkey(value, windows=windows) for value in vkeys)
    if fetch_urls:
        from affidavit.registry.clients.registry import fetch_public_key  # noqa: PLC0415 - explicit network

        for url in fetch_urls:
            fetched = fetch_public_key(url)
            click.echo(f"note: trusting key {fetched.b64} fetched from {url}; pin it", err=True)
            roots.append(_one(TrustedKey(fetched, url, "fetched")))
    root = TrustRoot().merge(*roots)
    if needed_by is not None and not root.keys:
        raise errors.UsageError(
            f"{needed_by} needs a trusted key: --public-key-base64 K, --public-key FILE,"
            " --trusted-keys DIR or --vkey VKEY (fail closed)"
        )
    return root


def read_key_file(path: str, *, windows: bool = False) -> TrustRoot:
    """One key file the caller named, read as a key whatever its name.

    Raises:
        ``io.unreadable``: it cannot be read. ``key.unrecognized``: larger than a key file.
        ``key.*``, ``json.*``: not a key.
    """
    return _one(parse_key_bytes(read_key_bytes(path), source=path, windows=windows))


def read_folder(path: str, *, windows: bool = False) -> TrustRoot:
    """The keys of a folder, in name order, files that are not keys skipped.

    Raises:
        ``io.unreadable``: not a folder. ``usage.invalid``: no key in it (fail closed).
        ``key.*``, ``json.*``: a file claiming to be a key is malformed.
    """
    candidates, skipped = folder_files(path)
    files: list[KeyFile] = []
    for file in candidates:
        try:
            files.append(KeyFile(file, read_key_bytes(file)))
        except errors.KeyMaterialError:
            if not file.endswith(".json"):
                raise  # a *.pub or *.pem larger than a key file claims to be one: malformed
            skipped.append(Skipped(file, "larger than a key file: not a key"))
    root = TrustRoot.from_files(files, windows=windows, folder=path)
    return root._replace(skipped=(*skipped, *root.skipped))


def folder_files(path: str) -> tuple[list[str], list[Skipped]]:
    """The files of a folder that may be keys by name (:func:`name_claims_key`), in name
    order, and the entries that are not.

    Raises:
        ``io.unreadable``: ``path`` is not a folder, or cannot be listed.
    """
    if not os.path.isdir(path):
        raise errors.ParseError("io.unreadable", f"{path}: not a folder")
    try:
        names = sorted(os.listdir(path))
    except OSError as e:
        raise errors.ParseError("io.unreadable", f"{path}: {e.strerror or e}") from None
    candidates: list[str] = []
    skipped: list[Skipped] = []
    for name in names:
        full = os.path.join(path, name)
        reason = "a folder" if not os.path.isfile(full) else name_claims_key(name)
        if reason is None:
            candidates.append(full)
        else:
            skipped.append(Skipped(full, reason))
    return candidates, skipped


def read_key_path(path: str, *, windows: bool = False) -> TrustRoot:
    """A key file, or a folder of them (:func:`read_key_file`, :func:`read_folder`)."""
    if os.path.isdir(path):
        return read_folder(path, windows=windows)
    return read_key_file(path, windows=windows)


def _vkey(value: str, *, windows: bool) -> TrustRoot:
    # --vkey: a verifier key string, or (as scripts have it) a key file or folder.
    if os.path.isdir(value) or os.path.isfile(value):
        return read_key_path(value, windows=windows)
    from affidavit.verify.crypto.checkpoint import parse_verifier_key  # noqa: PLC0415 - lazy

    verifier = parse_verifier_key(value)  # key.vkey_malformed says what is wrong
    return _one(TrustedKey(verifier.key, "--vkey", "vkey", verifier=verifier))


def _one(trusted: TrustedKey) -> TrustRoot:
    return TrustRoot((trusted,))
