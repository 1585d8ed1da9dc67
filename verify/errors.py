"""The error tree of Affidavit: a few classes by family, each error carrying its stable ``code``.

::

    AffidavitError                  base of every error raised on purpose; never raised itself
    ├── ParseError                  json.*, io.*   the input is not what it claims to be
    ├── UsageError                  usage.*        a function or command was called wrongly
    ├── CanonicalError              canonical.*    a value has no canonical form
    ├── KeyMaterialError            key.*          malformed key material
    ├── SignatureError              signature.*, treehead.*, checkpoint.*
    ├── ProofError                  merkle.*, anchor.*, tlog.*   a Merkle, time-stamp or tlog proof
    ├── ContractError               contract.*, entry.*, manifest.*, pin.*, validator.*, adapter.*
    ├── PolicyError                 policy.*
    ├── BundleError                 bundle.*, event.*, attestation.*
    ├── LineageError                lineage.*, fact.*, stigmem.* and seed 002's bare codes
    ├── EnvelopeError               dsse.*, statement.*   a DSSE envelope or in-toto Statement
    ├── ReceiptError                receipt.*, transform.*   a transformation receipt (seed 004)
    ├── ScittError                  cbor.*, scitt.*   SCITT statements and COSE receipts (RFC 9943)
    │
    ├── attest.errors.StoreError    store.*        (the storage layer, affidavit.attest.errors)
    ├── attest.errors.LogError      log.*
    ├── registry.errors.RegistryError   registry.*, http.*, stigmem.node_*
    (affidavit.registry.errors)
    └── registry.errors.AuthError   auth.*

A family says *where* something went wrong; the ``code`` (declared in :mod:`affidavit.verify.codes`
with its exit code) says *what*, and is raised spelled out so a search finds it::

    raise errors.BundleError("bundle.malformed", "events is not an array")
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from affidavit.verify.codes import (
    ANCHOR,
    BUNDLE,
    CANONICAL,
    CBOR,
    CONTRACT,
    ENVELOPE,
    KEY,
    LINEAGE,
    MERKLE,
    PARSE,
    POLICY,
    PREDICATE,
    RECEIPT,
    SCITT,
    SIGNATURE,
    STATEMENT,
    TLOG,
    TRANSFORM,
    USAGE,
    Code,
    catalogue,
)

__all__ = [
    "AffidavitError",
    "BundleError",
    "CanonicalError",
    "ContractError",
    "EnvelopeError",
    "KeyMaterialError",
    "LineageError",
    "ParseError",
    "PolicyError",
    "ProofError",
    "ReceiptError",
    "ScittError",
    "SignatureError",
    "UsageError",
    "families",
]


class AffidavitError(Exception):
    """Base of every error Affidavit raises on purpose: a stable ``code`` (one of the family's
    ``codes``), a ``message`` for people, JSON-able ``details`` (never secrets), its ``exit_code``.
    """

    codes: ClassVar[Mapping[str, Code]] = {}

    def __init__(self, code: str, message: str, *, details: dict[str, Any] | None = None) -> None:
        entry = self.codes.get(code)
        if entry is None:
            raise ValueError(f"{code!r} is not a code of {type(self).__name__}")
        # args = (code, message): an error pickles and unpickles whole (process pools).
        super().__init__(code, message)
        self.code = code
        self.exit_code = entry.exit_code
        self.message = message
        self.details: dict[str, Any] = dict(details) if details else {}

    def __str__(self) -> str:
        return self.message

    def to_json(self) -> dict[str, Any]:
        """The wire form ``{code, message, details}`` used by the CLI's --json and the registry."""
        return {"code": self.code, "message": self.message, "details": self.details}


class ParseError(AffidavitError):
    """The input could not be read as what it claims to be (``json.*``, ``io.*``); a ``json.*``
    error adds ``line`` and ``column`` (1-based, 0 when unknown) to the message and details."""

    codes = catalogue(PARSE)

    def __init__(
        self,
        code: str,
        message: str,
        *,
        line: int = 0,
        column: int = 0,
        details: dict[str, Any] | None = None,
    ) -> None:
        if code.startswith("json."):
            details = {"line": line, "column": column, **(details or {})}
            message += f" (line {line}, column {column})" if line else ""
        super().__init__(code, message, details=details)
        self.line = line
        self.column = column


class UsageError(AffidavitError):
    """A function or command was called with arguments it cannot accept (``usage.invalid``, or
    a more precise ``code=`` from the command line's parser)."""

    codes = catalogue(USAGE)

    def __init__(
        self, message: str, *, code: str = "usage.invalid", details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(code, message, details=details)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message,), self.__dict__)


class CanonicalError(AffidavitError):
    """A value has no canonical form (RFC 8785 or the AiGentsy forms): ``canonical.*``."""

    codes = catalogue(CANONICAL)


class KeyMaterialError(AffidavitError):
    """Malformed key material: wrong length, bad base64, weak or non-canonical key (``key.*``)."""

    codes = catalogue(KEY)


class SignatureError(AffidavitError):
    """A signature, signed tree head or checkpoint is malformed or does not verify."""

    codes = catalogue(SIGNATURE)


class ProofError(AffidavitError):
    """A Merkle proof, an RFC 3161 anchor, a tile, cosignature or tlog-proof does not verify."""

    codes = catalogue(MERKLE, ANCHOR, TLOG)


class ContractError(AffidavitError):
    """An AdapterContract, manifest entry, manifest, pin or validator is malformed or fails."""

    codes = catalogue(CONTRACT)


class PolicyError(AffidavitError):
    """An acceptance policy is malformed, or replaying it does not give the recorded decision."""

    codes = catalogue(POLICY)


class BundleError(AffidavitError):
    """A proof bundle, one of its events or an outcome attestation is malformed or fails."""

    codes = catalogue(BUNDLE)


class LineageError(AffidavitError):
    """A fact, a derivation link, a provenance walk or a fact store is malformed or fails."""

    codes = catalogue(LINEAGE)


class EnvelopeError(AffidavitError):
    """A DSSE envelope, its signatures or the in-toto Statement it carries is malformed or fails."""

    codes = catalogue(ENVELOPE, STATEMENT, PREDICATE)


class ReceiptError(AffidavitError):
    """A transformation receipt, or a declared transformation it replays, is malformed or fails."""

    codes = catalogue(RECEIPT, TRANSFORM)


class ScittError(AffidavitError):
    """A SCITT Signed or Transparent Statement, a COSE Receipt, or the strict CBOR under them, is
    malformed, does not verify, or is refused by a registration policy."""

    codes = catalogue(CBOR, SCITT)


def families() -> Iterator[type[AffidavitError]]:
    """Every family of this layer, in the order of the tree above."""
    yield from (
        ParseError,
        UsageError,
        CanonicalError,
        KeyMaterialError,
        SignatureError,
        ProofError,
        ContractError,
        PolicyError,
        BundleError,
        LineageError,
        EnvelopeError,
        ReceiptError,
        ScittError,
    )
