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

Both hashes are ``H(py-compact(...))`` over a fixed key set; neither covers the other, lifecycle
fields, or ``_``-keys. Hashes and lint reports are memoized on what they cover.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
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
    "contract_hashes",
    "input_schema_hash",
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
_ARRAY_FIELDS: Final = ("output_fields", "allowed_policy_fields")


def _sorted_list(value: Any) -> list[Any]:
    # As the peer does: a missing or empty (falsy) array is [], anything iterable is sorted.
    if not value:
        return []
    # sorted() over a dict sorts its keys, over a string its characters: mirror that exactly.
    items = list(value) if isinstance(value, list | tuple | str | dict) else [value]
    try:
        return sorted(items)
    except TypeError:  # mixed types cannot come from a schema-valid contract; stay deterministic
        return sorted(items, key=lambda x: (type(x).__name__, x if isinstance(x, str) else repr(x)))


def _hash_body(declaration: Mapping[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    # docs/formats.md §2: a missing string counts as "" (adapter_contract_version as "1.0.0"), a
    # missing array as []; a present value, even null, is hashed as it is.
    body: dict[str, Any] = {}
    for key in fields:
        if key in _ARRAY_FIELDS:
            body[key] = _sorted_list(declaration.get(key))
        else:
            missing = DEFAULT_CONTRACT_VERSION if key == "adapter_contract_version" else ""
            body[key] = declaration.get(key, missing)
    return body


def input_schema_hash(declaration: Mapping[str, Any]) -> str:
    """Recompute ``input_schema_hash`` from a declaration (docs/formats.md §2)."""
    return sha256_hex(py_compact(_hash_body(declaration, INPUT_SCHEMA_HASH_FIELDS)))


def contract_hash(declaration: Mapping[str, Any]) -> str:
    """Recompute ``contract_hash`` from a declaration (docs/formats.md §2)."""
    return sha256_hex(py_compact(_hash_body(declaration, CONTRACT_HASH_FIELDS)))


class ContractHashes(NamedTuple):
    """Both recomputed hashes of one declaration (docs/formats.md §2)."""

    contract_hash: str
    input_schema_hash: str


_CACHE_LIMIT: Final = 4096
_HASH_CACHE: dict[tuple[Any, ...], ContractHashes] = {}


def _hash_key(declaration: Mapping[str, Any]) -> tuple[Any, ...] | None:
    # A cache key is only built when every hashed value is an exact str (or a list of them):
    # then equal keys mean equal py-compact bytes. Anything else (1 == 1.0 == True in Python)
    # is hashed without the cache.
    key: list[Any] = []
    for name, value in _hash_body(declaration, CONTRACT_HASH_FIELDS).items():
        raw = declaration.get(name)
        if name in _ARRAY_FIELDS and (
            not raw or (type(raw) is list and all(type(item) is str for item in raw))
        ):
            key.append(tuple(value))
        elif type(value) is str:
            key.append(value)
        else:
            return None
    return tuple(key)


def contract_hashes(declaration: Mapping[str, Any]) -> ContractHashes:
    """Both hashes of ``declaration``, memoized on the hashed values (docs/formats.md §2).

    Raises:
        ``canonical.*``: a hashed value has no JSON form (only possible for non-JSON input).
    """
    key = _hash_key(declaration)
    hashes = _HASH_CACHE.get(key) if key is not None else None
    if hashes is None:
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
    """What ``lint_contract`` found: ``contract_hash`` and ``input_schema_hash`` recomputed,
    ``declared_*`` as claimed ("" when absent or not a string); warnings never fail a contract."""

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
        """The peer's lint document (hashes as declared, issues as messages) plus the recomputed
        hashes and each issue with its code."""
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

    Checks the schema and allowed ⊆ output, compares both recomputed hashes with the declared ones
    (only when the schema holds), checks lifecycle fields, and warns on a validator ``validators``
    does not know, a lifecycle advisory or an unknown ``adapter_contract_version``. ``_``-keys are
    ignored. With ``cache`` (and the default validators) the report is memoized.

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
        for name, code, recomputed in (
            ("input_schema_hash", "contract.input_schema_hash_mismatch", hashes.input_schema_hash),
            ("contract_hash", "contract.hash_mismatch", hashes.contract_hash),
        ):
            if declaration[name] != recomputed:
                message = f"{name} mismatch: declared {declaration[name]}, recomputed {recomputed}"
                issues.append(Issue(code, message, name))
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
    problems = {
        name: message
        for name, (valid, message) in _LIFECYCLE_RULES.items()
        if name in declaration and not valid(declaration[name])
    }
    for name in LIFECYCLE_FIELDS:
        value = declaration.get(name)
        if name not in problems and isinstance(value, str) and _CONTROL.search(value):
            problems[name] = f"{name} holds a control character"
    issues = [Issue("contract.lifecycle_invalid", text, name) for name, text in problems.items()]
    # seed 003: supersedes is "the version this release replaces", replaced_by "the migration
    # target"; neither can be the release itself.
    own = f"{declaration.get('adapter_id')}@{declaration.get('adapter_version')}"
    issues.extend(
        Issue(
            "contract.lifecycle_self_reference", f"{name} names the contract itself ({own})", name
        )
        for name in ("supersedes", "replaced_by")
        if name not in problems and declaration.get(name) == own
    )
    return issues


def _is_iso8601(value: Any) -> bool:
    if not isinstance(value, str) or len(value) < 10 or not value[:4].isdigit():
        return False
    from datetime import datetime  # noqa: PLC0415 - lazy (cold start, docs/adr/0003)

    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _is_pointer(value: Any) -> bool:
    return isinstance(value, str) and _POINTER.fullmatch(value) is not None


_LIFECYCLE_RULES: Final[dict[str, tuple[Callable[[Any], bool], str]]] = {
    "status": (
        LIFECYCLE_STATUSES.__contains__,
        f"status must be one of {', '.join(LIFECYCLE_STATUSES)}",
    ),
    "supersedes": (_is_pointer, "supersedes must be adapter_id@MAJOR.MINOR.PATCH"),
    "replaced_by": (_is_pointer, "replaced_by must be adapter_id@MAJOR.MINOR.PATCH"),
    "min_verifier_version": (is_semver, "min_verifier_version is not MAJOR.MINOR.PATCH"),
    "published_at": (_is_iso8601, "published_at is not an ISO-8601 date-time"),
    "distribution_channel": (
        DISTRIBUTION_CHANNELS.__contains__,
        f"distribution_channel must be one of {', '.join(DISTRIBUTION_CHANNELS)}",
    ),
}


def _warnings(declaration: Mapping[str, Any], validators: ValidatorRegistry) -> list[Issue]:
    warnings: list[Issue] = []
    name = declaration.get("validator_name")
    version = declaration.get("validator_version")
    if isinstance(name, str) and isinstance(version, str):
        try:
            why = "is not installed" if validators.get(name, version) is None else ""
        except errors.ContractError as e:
            if e.code != "validator.load_failed":
                raise
            why = f"could not be loaded ({e.message})"
        if why:
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
