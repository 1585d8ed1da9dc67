"""One trust input: what the caller trusts, by role, built from bytes the caller passes.

>>> root = TrustRoot.from_files([
...     KeyFile("keys/log.pub", b"11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\\n"),
...     KeyFile("keys/log.key.logstate-1.json", b'{"state": 1}'),
...     KeyFile("keys/README.md", b"# keys"),
... ])
>>> [key.key.b64 for key in root.keys]
['11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=']
>>> [(item.source, item.reason) for item in root.skipped][0]
('keys/log.key.logstate-1.json', 'a JSON document without public_key_base64: not a key')

Every verify verb takes its trust from one :class:`TrustRoot` (docs/adr/0016-one-trust-input.md).
The caller passes the files' bytes (:class:`KeyFile`); :func:`key_claim` decides once what a file
is: a ``*.pub`` or ``*.pem`` file claims to be a key by its name, a ``*.json`` file when it names
``public_key_base64`` (docs/formats.md §3), any other file not. A claimed key is read strictly
(``key.*``, ``json.*``); any other file is :class:`Skipped`, never an error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TypeVar

from affidavit.verify import errors
from affidavit.verify.crypto.trusted_keys import (
    MAX_KEY_FILE_BYTES,
    TrustedKey,
    key_windows,
    parse_key_bytes,
)

if TYPE_CHECKING:
    from affidavit.verify.crypto.checkpoint import NoteVerifier
    from affidavit.verify.crypto.keys import Ed25519PublicKey
    from affidavit.verify.crypto.windows import KeyWindow

__all__ = [
    "KEY_FILE_SUFFIXES",
    "KeyFile",
    "Skipped",
    "TrustRoot",
    "key_claim",
    "name_claims_key",
    "read_key_files",
]

KEY_FILE_SUFFIXES: Final = (".pub", ".pem", ".json")
_CLAIMED_BY_NAME: Final = (".pub", ".pem")
_KEY_DOCUMENT_FIELD: Final = b'"public_key_base64"'
_K = TypeVar("_K")


class KeyFile(NamedTuple):
    """The bytes of one file the caller read, and its name (for messages and ``--json``)."""

    source: str
    data: bytes


class Skipped(NamedTuple):
    """A file of a trust input that is not a key, and why."""

    source: str
    reason: str

    def to_json(self) -> dict[str, str]:
        """``{source, reason}``."""
        return {"source": self.source, "reason": self.reason}


def name_claims_key(name: str) -> str | None:
    """None when a file named ``name`` may be a key (read it and ask :func:`key_claim`), else
    why it is not one (its bytes need not be read)."""
    if name.endswith(KEY_FILE_SUFFIXES):
        return None
    return "not a key file (*.pub, *.pem, or a *.json key document)"


def key_claim(file: KeyFile) -> str | None:
    """None when ``file`` claims to be a key (module docstring), else why it is not one."""
    reason = name_claims_key(file.source)
    if reason is not None or file.source.endswith(_CLAIMED_BY_NAME):
        return reason
    if _KEY_DOCUMENT_FIELD in file.data[: MAX_KEY_FILE_BYTES + 1]:
        return None
    return "a JSON document without public_key_base64: not a key"


def read_key_files(
    files: Iterable[KeyFile], parse: Callable[[KeyFile], _K], *, folder: str | None = None
) -> tuple[tuple[_K, ...], tuple[Skipped, ...]]:
    """``parse`` each file that claims to be a key (:func:`key_claim`); skip the others, with
    the reason. ``folder`` names the folder the files are, which must hold a key.

    Raises:
        ``usage.invalid``: ``folder`` holds no key (fail closed).
        whatever ``parse`` raises for a file that claims to be a key and is not one.
    """
    keys: list[_K] = []
    skipped: list[Skipped] = []
    for file in files:
        reason = key_claim(file)
        if reason is None:
            keys.append(parse(file))
        else:
            skipped.append(Skipped(file.source, reason))
    if folder is not None and not keys:
        raise errors.UsageError(
            f"{folder}: no key in it (*.pub, *.pem, or a *.json key document): an empty "
            "trust set trusts nothing (fail closed)"
        )
    return tuple(keys), tuple(skipped)


class TrustRoot(NamedTuple):
    """What the caller trusts (module docstring). Build it with :meth:`from_files` and
    :meth:`merge`; ``to_json`` lists the keys and the skipped files for ``--json``."""

    keys: tuple[TrustedKey, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    actor_keys: tuple[Any, ...] = ()  # TrustedActorKey (verify.bundles.actor_trust)
    tlog_policy: Any = None  # verify.tlog.policy.Policy: logs, witnesses, quorum
    tsa_certs: tuple[bytes, ...] = ()  # PEM or DER, verify.anchor.rfc3161
    ca_certs: tuple[bytes, ...] = ()

    @classmethod
    def from_files(
        cls, files: Iterable[KeyFile], *, windows: bool = False, folder: str | None = None
    ) -> TrustRoot:
        """The keys of ``files`` (:func:`read_key_files`); ``windows``: the caller honours
        validity windows.

        Raises:
            ``key.*``, ``json.*``, ``manifest.publisher_document_invalid``: a file that claims
                to be a key is malformed.
            ``usage.invalid``: ``folder`` holds no key (fail closed).
        """
        keys, skipped = read_key_files(
            files,
            lambda file: parse_key_bytes(file.data, source=file.source, windows=windows),
            folder=folder,
        )
        return cls(keys, skipped)

    def merge(self, *others: TrustRoot) -> TrustRoot:
        """This root and ``others``, in order (the first policy or certificates given win)."""
        roots = (self, *others)
        return TrustRoot(
            tuple(key for root in roots for key in root.keys),
            tuple(item for root in roots for item in root.skipped),
            tuple(key for root in roots for key in root.actor_keys),
            next((root.tlog_policy for root in roots if root.tlog_policy is not None), None),
            tuple(cert for root in roots for cert in root.tsa_certs),
            tuple(cert for root in roots for cert in root.ca_certs),
        )

    @property
    def public_keys(self) -> list[Ed25519PublicKey]:
        """The distinct trusted keys, in the order given."""
        return list(dict.fromkeys(trusted.key for trusted in self.keys))

    @property
    def raw_keys(self) -> list[bytes]:
        """:attr:`public_keys` as 32-byte strings."""
        return [key.raw for key in self.public_keys]

    @property
    def windows(self) -> dict[bytes, tuple[KeyWindow, ...]]:
        """``{raw key: windows}`` for the keys trusted only within validity windows."""
        return key_windows(self.keys)

    def note_verifiers(self) -> list[NoteVerifier]:
        """The keys as C2SP note verifiers (docs/formats.md §6).

        Raises:
            ``key.vkey_malformed``: a key without a name (not a verifier key).
        """
        verifiers: list[NoteVerifier] = []
        for loaded in self.keys:
            if loaded.verifier is None:
                raise errors.KeyMaterialError(
                    "key.vkey_malformed",
                    f"{loaded.source}: a {loaded.form} key, not a verifier key"
                    " name+keyid+base64 (a checkpoint needs the key's name)",
                )
            verifiers.append(loaded.verifier)
        return verifiers

    def to_json(self) -> dict[str, Any]:
        """``{keys: [{source, form, public_key_base64, name?, valid_from?, valid_until?}],
        skipped: [{source, reason}]}`` (specs/output/defs.schema.json ``trust``)."""
        return {
            "keys": [_key_json(trusted) for trusted in self.keys],
            "skipped": [item.to_json() for item in self.skipped],
        }


def _key_json(trusted: TrustedKey) -> dict[str, Any]:
    out: dict[str, Any] = {
        "source": trusted.source,
        "form": trusted.form,
        "public_key_base64": trusted.key.b64,
    }
    if trusted.verifier is not None:
        out["name"] = trusted.verifier.name
    if trusted.window is not None and trusted.document is not None:
        for field in ("valid_from", "valid_until"):
            if trusted.document.get(field) is not None:
                out[field] = trusted.document[field]
    return out
