"""AdapterContract: the two hashes and lint (docs/formats.md §2; seed 003).

>>> from affidavit.verify.contracts.contract import contract_hash, input_schema_hash, lint_contract
>>> declaration = {
...     "adapter_id": "acme.eval_suite.v0", "adapter_version": "0.1.0",
...     "input_schema_version": "1.0.0", "validator_name": "starter_boolean_validator",
...     "validator_version": "1.0.0", "output_fields": ["signal_a", "signal_b", "signal_c"],
...     "allowed_policy_fields": ["signal_a", "signal_b", "signal_c"],
... }
>>> contract_hash(declaration)
'8be7185ecdce9cf43f8f1084cd37205eccf669fc47d73356c438cbf7b490b7af'
>>> input_schema_hash(declaration)
'b917d8317f626c68823b139b6c8ada77a3b5f142701780ce27d44b60a0e56cb0'
>>> report = lint_contract({**declaration, "adapter_contract_version": "1.0.0",
...     "contract_hash": contract_hash(declaration),
...     "input_schema_hash": input_schema_hash(declaration)})
>>> report.ok, report.errors, report.warnings
(True, (), ())
>>> lint_contract({**declaration, "output_fields": ["signal_a"]}).error_codes[:2]
('contract.missing_field', 'contract.missing_field')

Both hashes are ``H(py-compact(...))`` over a fixed key set; a missing string counts as ``""`` and a
missing array as ``[]``. Neither covers the other, lifecycle fields, or ``_``-keys.
``lint_contract`` checks the schema (``affidavit.verify.contracts.schema``), recomputes both hashes
and compares them with the declared ones, checks lifecycle fields, and warns on a validator the
registry (``affidavit.verify.contracts.validators``) does not know. Results are memoized on the
canonical bytes of the declaration, so checking the same embedded contract again costs one encoding.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, NamedTuple

from affidavit.verify import errors
from affidavit.verify.contracts.schema import (
    ADAPTER_ID_PATTERN,
    SEMVER_PATTERN,
    Issue,
    is_semver,
    schema_issues,
)
from affidavit.verify.contracts.validators import ValidatorRegistry, default_registry
from affidavit.verify.json.canonical import py_compact, sha256_hex

__all__ = [
    "CONTRACT_HASH_FIELDS",
    "DISTRIBUTION_CHANNELS",
    "INPUT_SCHEMA_HASH_FIELDS",
    "LIFECYCLE_FIELDS",
    "LIFECYCLE_STATUSES",
    "ContractHashes",
    "ContractReport",
    "clear_caches",
    "contract_hash",
    "contract_hash_body",
    "contract_hashes",
    "input_schema_hash",
    "input_schema_hash_body",
    "lint_contract",
]

# docs/formats.md §2: the exact key sets each hash covers.
CONTRACT_HASH_FIELDS: Final = (
    "adapter_contract_version",
    "adapter_id",
    "adapter_version",
    "input_schema_version",
    "output_fields",
    "allowed_policy_fields",
    "validator_name",
    "validator_version",
)
INPUT_SCHEMA_HASH_FIELDS: Final = (
    "input_schema_version",
    "output_fields",
    "validator_name",
    "validator_version",
)
# seed 003: discovery-only fields, explicitly outside both hashes.
LIFECYCLE_FIELDS: Final = (
    "status",
    "supersedes",
    "replaced_by",
    "published_at",
    "min_verifier_version",
    "distribution_channel",
)
DEFAULT_CONTRACT_VERSION: Final = "1.0.0"


def _sorted_list(value: Any) -> list[Any]:
    # As the peer does: a missing or empty (falsy) array is [], anything iterable is sorted.
    if not value:
        return []
    # sorted() over a dict sorts its keys, over a string its characters: mirror that exactly.
    items = list(value) if isinstance(value, list | tuple | str | dict) else [value]
    try:
        return sorted(items)
    except TypeError:  # mixed types cannot come from a schema-valid contract; stay deterministic
        return sorted(items, key=_sort_key)


def _sort_key(item: Any) -> tuple[str, str]:
    # Arrays that pass the schema hold strings only; mixed junk still sorts deterministically.
    return (
        (type(item).__name__, item) if isinstance(item, str) else (type(item).__name__, repr(item))
    )


def _text(declaration: Mapping[str, Any], key: str, default: str = "") -> Any:
    # Missing counts as "" (docs/formats.md §2); a present value, even null, is hashed as it is.
    return declaration.get(key, default)


def input_schema_hash_body(declaration: Mapping[str, Any]) -> dict[str, Any]:
    """The object whose py-compact bytes ``input_schema_hash`` covers."""
    return {
        "input_schema_version": _text(declaration, "input_schema_version"),
        "output_fields": _sorted_list(declaration.get("output_fields")),
        "validator_name": _text(declaration, "validator_name"),
        "validator_version": _text(declaration, "validator_version"),
    }


def contract_hash_body(declaration: Mapping[str, Any]) -> dict[str, Any]:
    """The object whose py-compact bytes ``contract_hash`` covers."""
    return {
        "adapter_contract_version": _text(
            declaration, "adapter_contract_version", DEFAULT_CONTRACT_VERSION
        ),
        "adapter_id": _text(declaration, "adapter_id"),
        "adapter_version": _text(declaration, "adapter_version"),
        "input_schema_version": _text(declaration, "input_schema_version"),
        "output_fields": _sorted_list(declaration.get("output_fields")),
        "allowed_policy_fields": _sorted_list(declaration.get("allowed_policy_fields")),
        "validator_name": _text(declaration, "validator_name"),
        "validator_version": _text(declaration, "validator_version"),
    }


def input_schema_hash(declaration: Mapping[str, Any]) -> str:
    """Recompute ``input_schema_hash`` from a declaration (docs/formats.md §2)."""
    return sha256_hex(py_compact(input_schema_hash_body(declaration)))


def contract_hash(declaration: Mapping[str, Any]) -> str:
    """Recompute ``contract_hash`` from a declaration (docs/formats.md §2)."""
    return sha256_hex(py_compact(contract_hash_body(declaration)))


# ---------------------------------------------------------------------------------------------
# Memoized hashing


class ContractHashes(NamedTuple):
    """Both recomputed hashes of one declaration (docs/formats.md §2)."""

    contract_hash: str
    input_schema_hash: str


_CACHE_LIMIT: Final = 4096
_HASH_CACHE: dict[tuple[Any, ...], ContractHashes] = {}
_STRING_FIELDS: Final = (
    "adapter_id",
    "adapter_version",
    "input_schema_version",
    "validator_name",
    "validator_version",
)


def _hash_key(declaration: Mapping[str, Any]) -> tuple[Any, ...] | None:
    # A cache key is only built when every hashed value is an exact str (or a list of them):
    # then equal keys mean equal py-compact bytes. Anything else (1 == 1.0 == True in Python)
    # is hashed without the cache.
    version = declaration.get("adapter_contract_version", DEFAULT_CONTRACT_VERSION)
    if type(version) is not str:
        return None
    key: list[Any] = [version]
    for name in _STRING_FIELDS:
        value = declaration.get(name, "")
        if type(value) is not str:
            return None
        key.append(value)
    for name in ("output_fields", "allowed_policy_fields"):
        items = declaration.get(name)
        if not items:
            key.append(())
        elif type(items) is list and all(type(item) is str for item in items):
            key.append(tuple(items))
        else:
            return None
    return tuple(key)


def contract_hashes(declaration: Mapping[str, Any]) -> ContractHashes:
    """Both hashes of ``declaration``, memoized on the hashed values (docs/formats.md §2).

    Raises:
        ``canonical.*``: a hashed value has no JSON form (only possible for non-JSON input).
    """
    key = _hash_key(declaration)
    if key is not None:
        hit = _HASH_CACHE.get(key)
        if hit is not None:
            return hit
    hashes = ContractHashes(contract_hash(declaration), input_schema_hash(declaration))
    if key is not None:
        _remember(_HASH_CACHE, key, hashes)
    return hashes


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
    if len(cache) >= _CACHE_LIMIT:
        cache.pop(next(iter(cache)))  # oldest first: bounded memory whatever the input
    cache[key] = value


def clear_caches() -> None:
    """Forget every memoized hash and lint report (benchmarks; after installing validators)."""
    _HASH_CACHE.clear()
    _LINT_CACHE.clear()


# ---------------------------------------------------------------------------------------------
# Lint (seed 003 "Lint a contract"; lifecycle table)

LIFECYCLE_STATUSES: Final = ("active", "deprecated", "revoked")
DISTRIBUTION_CHANNELS: Final = (
    "aigentsy.builtin",
    "aigentsy.examples",
    "developer.local",
    "third_party",
)
# seed 003: supersedes / replaced_by are adapter_id@semver (SemVer 2.0.0 §2, no leading zeros).
_POINTER: Final = re.compile(f"{ADAPTER_ID_PATTERN}@{SEMVER_PATTERN}")
# C0 and C1 controls and DEL: never inside a lifecycle value (it may be signed, docs/formats.md §3).
_CONTROL: Final = re.compile("[\x00-\x1f\x7f-\x9f]")


class ContractReport(NamedTuple):
    """What ``lint_contract`` checked and found.

    ``contract_hash`` and ``input_schema_hash`` are recomputed from the declaration (never taken
    from it); ``declared_*`` are the values the file claims ("" when absent or not a string).
    ``ok`` is true iff there are no errors; warnings never fail a contract.
    """

    ok: bool
    errors: tuple[Issue, ...]
    warnings: tuple[Issue, ...]
    adapter_id: str
    contract_hash: str
    input_schema_hash: str
    declared_contract_hash: str = ""
    declared_input_schema_hash: str = ""

    @property
    def error_codes(self) -> tuple[str, ...]:
        """The codes of ``errors``, in order."""
        return tuple(issue.code for issue in self.errors)

    def raise_for_errors(self) -> None:
        """Raise the error class of the first error's code; return when ``ok``.

        Raises:
            ``contract.schema_invalid``: (a subclass per code) the declaration breaks the schema.
            ``contract.hash_mismatch``, ``contract.input_schema_hash_mismatch``: a declared hash is
                wrong.
            ``contract.lifecycle_invalid``: a lifecycle field is malformed.
        """
        if self.ok:
            return
        first = self.errors[0]
        code = first.code if first.code in errors.ContractError.codes else "contract.schema_invalid"
        raise errors.ContractError(
            code, first.message, details={"errors": [issue.to_json() for issue in self.errors]}
        )

    def to_json(self) -> dict[str, Any]:
        """The lint document: the peer's keys (``ok, errors, warnings, adapter_id,
        contract_hash, input_schema_hash``, the hashes as declared, errors and warnings as
        messages) plus the recomputed hashes and each issue with its code."""
        return {
            "ok": self.ok,
            "errors": [issue.message for issue in self.errors],
            "warnings": [issue.message for issue in self.warnings],
            "adapter_id": self.adapter_id,
            "contract_hash": self.declared_contract_hash,
            "input_schema_hash": self.declared_input_schema_hash,
            "recomputed_contract_hash": self.contract_hash,
            "recomputed_input_schema_hash": self.input_schema_hash,
            "error_details": [issue.to_json() for issue in self.errors],
            "warning_details": [issue.to_json() for issue in self.warnings],
        }


_LINT_CACHE: dict[bytes, ContractReport] = {}


def lint_contract(
    declaration: Any, *, cache: bool = True, validators: ValidatorRegistry = default_registry
) -> ContractReport:
    """Lint one AdapterContract declaration (seed 003 "Lint a contract").

    Checks the schema and allowed ⊆ output, recomputes both hashes and compares them with the
    declared ones (only when the schema holds), checks lifecycle fields, and warns on an unknown
    validator, a lifecycle advisory or an unknown ``adapter_contract_version``. Keys starting
    with ``_`` are ignored. Pure: no network, clock or environment. A validator is known when
    ``validators`` has it (default: the built-ins; a caller that trusts its installed plug-ins
    passes ``affidavit.attest.plugins.installed_validators()``). With ``cache`` (and the default
    validators) the report is memoized on the py-compact bytes of the declaration.

    Raises:
        ``canonical.*``: the declaration holds a value with no JSON form (not from parsed JSON).
    """
    if not isinstance(declaration, Mapping):
        return _report(schema_issues(declaration), (), {}, ContractHashes("", ""))
    body = {
        key: value
        for key, value in declaration.items()
        if not (isinstance(key, str) and key.startswith("_"))
    }
    if not cache or validators is not default_registry:
        return _lint(body, validators)
    key = py_compact(body)
    hit = _LINT_CACHE.get(key)
    if hit is None:
        hit = _lint(body, validators)
        _remember(_LINT_CACHE, key, hit)
    return hit


def _lint(declaration: dict[str, Any], validators: ValidatorRegistry) -> ContractReport:
    issues = list(schema_issues(declaration))
    hashes = contract_hashes(declaration)
    if not issues:
        # Compare only a schema-valid declaration: otherwise the mismatch is noise.
        if declaration["input_schema_hash"] != hashes.input_schema_hash:
            issues.append(
                Issue(
                    "contract.input_schema_hash_mismatch",
                    f"input_schema_hash mismatch: declared {declaration['input_schema_hash']}, "
                    f"recomputed {hashes.input_schema_hash}",
                    "input_schema_hash",
                )
            )
        if declaration["contract_hash"] != hashes.contract_hash:
            issues.append(
                Issue(
                    "contract.hash_mismatch",
                    f"contract_hash mismatch: declared {declaration['contract_hash']}, "
                    f"recomputed {hashes.contract_hash}",
                    "contract_hash",
                )
            )
    issues.extend(_lifecycle_issues(declaration))
    return _report(tuple(issues), tuple(_warnings(declaration, validators)), declaration, hashes)


def _report(
    issues: tuple[Issue, ...],
    warnings: tuple[Issue, ...],
    declaration: Mapping[str, Any],
    hashes: ContractHashes,
) -> ContractReport:
    return ContractReport(
        ok=not issues,
        errors=issues,
        warnings=warnings,
        adapter_id=_string(declaration.get("adapter_id")),
        contract_hash=hashes.contract_hash,
        input_schema_hash=hashes.input_schema_hash,
        declared_contract_hash=_string(declaration.get("contract_hash")),
        declared_input_schema_hash=_string(declaration.get("input_schema_hash")),
    )


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _lifecycle_issues(declaration: Mapping[str, Any]) -> list[Issue]:
    # seed 003 lifecycle fields: optional, outside both hashes, checked only when present.
    problems: list[tuple[str, str]] = []
    self_pointers: list[Issue] = []
    own = f"{declaration.get('adapter_id')}@{declaration.get('adapter_version')}"
    if "status" in declaration and declaration["status"] not in LIFECYCLE_STATUSES:
        problems.append(("status", f"status must be one of {', '.join(LIFECYCLE_STATUSES)}"))
    for name in ("supersedes", "replaced_by"):
        value = declaration.get(name)
        if name in declaration and not (isinstance(value, str) and _POINTER.fullmatch(value)):
            problems.append((name, f"{name} must be adapter_id@MAJOR.MINOR.PATCH"))
        elif value == own:
            # seed 003: supersedes is "the version this release replaces", replaced_by "the
            # migration target"; neither can be the release itself.
            self_pointers.append(
                Issue(
                    "contract.lifecycle_self_reference",
                    f"{name} names the contract itself ({own})",
                    name,
                )
            )
    if "min_verifier_version" in declaration and not is_semver(declaration["min_verifier_version"]):
        problems.append(("min_verifier_version", "min_verifier_version is not MAJOR.MINOR.PATCH"))
    if "published_at" in declaration and not _is_iso8601(declaration["published_at"]):
        problems.append(("published_at", "published_at is not an ISO-8601 date-time"))
    channel = declaration.get("distribution_channel")
    if "distribution_channel" in declaration and channel not in DISTRIBUTION_CHANNELS:
        problems.append(
            (
                "distribution_channel",
                f"distribution_channel must be one of {', '.join(DISTRIBUTION_CHANNELS)}",
            )
        )
    for name in LIFECYCLE_FIELDS:
        value = declaration.get(name)
        if (
            isinstance(value, str)
            and _CONTROL.search(value)
            and name not in {n for n, _ in problems}
        ):
            problems.append((name, f"{name} holds a control character"))
    issues = [Issue("contract.lifecycle_invalid", message, name) for name, message in problems]
    return issues + self_pointers


def _is_iso8601(value: Any) -> bool:
    if not isinstance(value, str) or len(value) < 10 or not value[:4].isdigit():
        return False
    from datetime import datetime  # noqa: PLC0415 - lazy (cold start, docs/adr/0003)

    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _warnings(declaration: Mapping[str, Any], validators: ValidatorRegistry) -> list[Issue]:
    warnings: list[Issue] = []
    name = declaration.get("validator_name")
    version = declaration.get("validator_version")
    if isinstance(name, str) and isinstance(version, str):
        try:
            known = validators.get(name, version) is not None
            why = "is not installed"
        except errors.ContractError as e:
            if e.code != "validator.load_failed":
                raise
            known, why = False, f"could not be loaded ({e.message})"
        if not known:
            warnings.append(
                Issue(
                    "validator.unknown",
                    f"validator {name} {version} {why}: outputs cannot be re-validated here",
                    "validator_name",
                )
            )
    version = declaration.get("adapter_contract_version")
    if is_semver(version) and version != DEFAULT_CONTRACT_VERSION:
        warnings.append(
            Issue(
                "contract.unknown_contract_version",
                f"adapter_contract_version {version} is not {DEFAULT_CONTRACT_VERSION}",
                "adapter_contract_version",
            )
        )
    warnings.extend(_lifecycle_warnings(declaration))
    return warnings


def _lifecycle_warnings(declaration: Mapping[str, Any]) -> list[Issue]:
    # seed 003 table "Deprecated, superseded, and revoked": advisories, never lint failures.
    status = declaration.get("status")
    replacement = declaration.get("replaced_by")
    pointer = replacement if isinstance(replacement, str) and replacement else "none declared"
    if status == "deprecated":
        message = f"contract is deprecated; migrate new work to {pointer}"
        return [Issue("contract.deprecated", message, "status")]
    if status == "revoked":
        message = (
            f"contract is revoked: new adoption is blocked (replacement: {pointer}); "
            "bundles that embed it still replay"
        )
        return [Issue("contract.revoked", message, "status")]
    if status in (None, "active") and isinstance(replacement, str) and replacement:
        message = f"contract is superseded by {replacement}; adoption allowed, consider migrating"
        return [Issue("contract.superseded", message, "replaced_by")]
    return []
