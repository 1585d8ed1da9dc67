"""The one error tree of Affidavit. Every leaf has a stable ``code``.

::

    AffidavitError                     base; never raised itself
    ├── InputError                     exit 2: the input could not be read as what it claims to be
    │   ├── JsonError                  strict JSON parsing (json.*), carries line and column
    │   ├── CanonicalError             a value has no canonical form (canonical.*)
    │   ├── KeyFormatError             malformed key material (key.*)
    │   └── UsageError                 a command was called wrongly (usage.*)
    ├── VerificationError              exit 1: the input was read, and it does not verify
    └── PolicyRefusal                  exit 3: refused by policy (e.g. pinning a revoked contract)

The codes are listed in ``specs/error-codes.json`` (regenerate with ``python tools/gen_error_codes.py``);
a test checks that the classes here and that list agree. Codes are part of the public interface:
the CLI prints ``error: <code>: <message>``, the registry returns ``{code, message, details}``, and the
golden vectors name the code they expect.

Each area adds its leaves in its own section below; keep one class per code.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

__all__ = [
    "AffidavitError",
    "CanonicalError",
    "InputError",
    "JsonError",
    "KeyFormatError",
    "PolicyRefusal",
    "UsageError",
    "VerificationError",
    "all_error_classes",
]


class AffidavitError(Exception):
    """Base of every error Affidavit raises on purpose.

    ``code`` is stable and machine-readable; ``message`` is for people; ``details`` is a small
    JSON-able mapping (never secrets).
    """

    code: ClassVar[str] = "affidavit.error"
    exit_code: ClassVar[int] = 2
    description: ClassVar[str] = "Base class; never raised itself."

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details) if details else {}

    def __str__(self) -> str:
        return self.message

    def to_json(self) -> dict[str, Any]:
        """The wire form ``{code, message, details}`` used by the CLI's --json and the registry."""
        return {"code": self.code, "message": self.message, "details": self.details}


class InputError(AffidavitError):
    """The input could not be read as what it claims to be (exit code 2)."""

    code = "input.invalid"
    exit_code = 2
    description = "The input could not be read."


class VerificationError(AffidavitError):
    """The input was read and does not verify (exit code 1)."""

    code = "verify.failed"
    exit_code = 1
    description = "Verification failed."


class PolicyRefusal(AffidavitError):
    """The operation is refused by policy (exit code 3)."""

    code = "policy.refused"
    exit_code = 3
    description = "Refused by policy."


class UsageError(InputError):
    """A command or function was called with arguments it cannot accept."""

    code = "usage.invalid"
    description = "Invalid usage or arguments."


class KeyFormatError(InputError):
    """Key material that is malformed: wrong length, bad base64, weak key."""

    code = "key.invalid"
    description = "Malformed key material."


# ---------------------------------------------------------------------------------------------
# I/O


class FileReadError(InputError):
    """A file could not be opened or read."""

    code = "io.unreadable"
    description = "A file could not be read."


class FileExistsRefusal(InputError):
    """Refused to overwrite an existing file."""

    code = "io.exists"
    description = "Refused to overwrite an existing file (use --force where offered)."


# ---------------------------------------------------------------------------------------------
# Strict JSON (formats.md §1 "Strict input")


class JsonError(InputError):
    """Strict JSON parsing failed. ``line`` and ``column`` are 1-based (0 when unknown)."""

    code = "json.invalid"
    description = "The document is not strict JSON."

    def __init__(
        self,
        message: str,
        *,
        line: int = 0,
        column: int = 0,
        details: dict[str, Any] | None = None,
    ) -> None:
        merged = {"line": line, "column": column, **(details or {})}
        where = f" (line {line}, column {column})" if line else ""
        super().__init__(message + where, details=merged)
        self.line = line
        self.column = column


class JsonSyntaxError(JsonError):
    code = "json.syntax"
    description = "Not well-formed JSON (RFC 8259)."


class JsonDuplicateKey(JsonError):
    code = "json.duplicate_key"
    description = "An object has the same key twice; the document could be read two ways."


class JsonNonFinite(JsonError):
    code = "json.non_finite"
    description = "NaN, Infinity or -Infinity literal, or a number too large for a double."


class JsonLoneSurrogate(JsonError):
    code = "json.lone_surrogate"
    description = "A string holds an unpaired UTF-16 surrogate (raw or escaped)."


class JsonInvalidUtf8(JsonError):
    code = "json.invalid_utf8"
    description = "The bytes are not valid UTF-8."


class JsonByteOrderMark(JsonError):
    code = "json.bom"
    description = "The document starts with a byte-order mark."


class JsonTooDeep(JsonError):
    code = "json.too_deep"
    description = "Arrays and objects nest deeper than the limit (default 128)."


class JsonTooLarge(JsonError):
    code = "json.too_large"
    description = "The document is larger than the size limit (default 64 MiB)."


class JsonTrailingData(JsonError):
    code = "json.trailing_data"
    description = "Data follows the JSON value."


class JsonWrongType(JsonError):
    code = "json.wrong_type"
    description = "The JSON value is not of the expected type (e.g. an object)."


# ---------------------------------------------------------------------------------------------
# Canonical encodings (formats.md §1)


class CanonicalError(InputError):
    """A value has no canonical encoding under the requested form."""

    code = "canonical.invalid"
    description = "The value cannot be canonically encoded."


class CanonicalUnsafeInteger(CanonicalError):
    code = "canonical.unsafe_integer"
    description = "An integer outside +-(2^53-1) cannot be encoded by RFC 8785 (I-JSON)."


class CanonicalNonStringKey(CanonicalError):
    code = "canonical.non_string_key"
    description = "An object key is not a string."


class CanonicalNonFinite(CanonicalError):
    code = "canonical.non_finite"
    description = "NaN and infinities have no JSON form."


class CanonicalLoneSurrogate(CanonicalError):
    code = "canonical.lone_surrogate"
    description = "A string holds an unpaired surrogate, which has no UTF-8 form."


class CanonicalUnsupportedType(CanonicalError):
    code = "canonical.unsupported_type"
    description = "A value is not a JSON type (dict, list, str, int, float, bool, None)."


# ---------------------------------------------------------------------------------------------
# AdapterContract (formats.md §2, seed 003)


class ContractError(InputError):
    """An AdapterContract could not be read or is structurally unusable."""

    code = "contract.invalid"
    description = "The AdapterContract is invalid."


class ContractSchemaError(VerificationError):
    code = "contract.schema_invalid"
    description = "The AdapterContract does not conform to its schema."


class ContractHashMismatch(VerificationError):
    code = "contract.hash_mismatch"
    description = "The declared contract_hash differs from the recomputed one."


class ContractInputSchemaHashMismatch(VerificationError):
    code = "contract.input_schema_hash_mismatch"
    description = "The declared input_schema_hash differs from the recomputed one."


class ContractVersionNotIncreasing(UsageError):
    code = "contract.version_not_increasing"
    description = "bump refuses a version lower than or equal to the current one."


def all_error_classes() -> Iterator[type[AffidavitError]]:
    """Every error class in the tree, base first, depth-first, each once."""
    seen: set[type[AffidavitError]] = set()
    stack: list[type[AffidavitError]] = [AffidavitError]
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        yield cls
        stack.extend(reversed(cls.__subclasses__()))
