"""Deterministic validators: type an adapter's raw output against its AdapterContract (seed 003).

>>> from affidavit.verify.contracts.validators import default_registry
>>> contract = {"output_fields": ["tests_passed", "coverage_met"],
...             "allowed_policy_fields": ["tests_passed"],
...             "validator_name": "starter_boolean_validator", "validator_version": "1.0.0"}
>>> validator = default_registry.get("starter_boolean_validator", "1.0.0")
>>> result = validator.validate({"tests_passed": True, "coverage_met": False}, contract)
>>> result.status, result.normalized_policy_inputs
('accepted', {'tests_passed': True})
>>> validator.validate({"tests_passed": 1, "coverage_met": False}, contract).status
'rejected'

A validator is a pure function of (raw output, contract); fail closed (seed 003 "Fail-closed
defaults"): a rejected result emits no normalized inputs, an accepted one only
``allowed_policy_fields``. A *family* (entry-point group ``affidavit.validators``) returns a name's
validators, one per version; this package reads no entry point, the caller passes its plug-ins.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, Final, Literal, NamedTuple, Protocol, runtime_checkable

from affidavit.verify import errors

__all__ = [
    "ENTRY_POINT_GROUP",
    "BooleanValidator",
    "Family",
    "ValidationResult",
    "Validator",
    "ValidatorPlugins",
    "ValidatorRegistry",
    "boolean_validator_family",
    "default_registry",
]

ENTRY_POINT_GROUP: Final = "affidavit.validators"
BOOLEAN_VALIDATOR_NAME: Final = "starter_boolean_validator"

Status = Literal["accepted", "rejected"]


class ValidationResult(NamedTuple):
    """The outcome of running a validator on one raw output: ``normalized_policy_inputs``
    (read-only) is empty unless accepted; ``errors`` says why an output was rejected."""

    status: Status
    normalized_policy_inputs: Mapping[str, Any] = MappingProxyType({})  # read-only, shared
    errors: tuple[str, ...] = ()

    @property
    def accepted(self) -> bool:
        """True iff the output was accepted."""
        return self.status == "accepted"

    @property
    def validation_result(self) -> str:
        """The peer's wire word for ``adapter_evaluation.validation_result``: passed | rejected."""
        return "passed" if self.accepted else "rejected"

    def to_json(self) -> dict[str, Any]:
        """``{status, normalized_policy_inputs, errors}``."""
        return {
            "status": self.status,
            "normalized_policy_inputs": dict(self.normalized_policy_inputs),
            "errors": list(self.errors),
        }


@runtime_checkable
class Validator(Protocol):
    """A deterministic validator named by ``(name, version)``."""

    @property
    def name(self) -> str: ...  # the validator_name it answers to

    @property
    def version(self) -> str: ...  # the validator_version it answers to

    def validate(
        self, raw_output: Mapping[str, Any], contract: Mapping[str, Any]
    ) -> ValidationResult:
        """Type ``raw_output`` against ``contract``; never raises on any JSON input."""
        ...


def _reject(*reasons: str) -> ValidationResult:
    return ValidationResult("rejected", {}, tuple(reasons))


class BooleanValidator(NamedTuple):
    """The boolean family: every output field present and a real JSON boolean (not ``1``,
    ``"true"`` or ``null``); extra keys are ignored (they never reach policy)."""

    name: str = BOOLEAN_VALIDATOR_NAME
    version: str = "1.0.0"

    def validate(self, raw_output: Any, contract: Any) -> ValidationResult:
        """Accept iff every ``output_fields`` entry is present and boolean (seed 003)."""
        # Typed Any on purpose: callers pass untrusted JSON, and nothing here may raise.
        if not isinstance(contract, Mapping):
            return _reject("contract is not an object")
        named = (contract.get("validator_name"), contract.get("validator_version"))
        if named != (self.name, self.version):
            return _reject(f"contract names validator {named[0]!r} {named[1]!r}, not this one")
        output_fields: Any = contract.get("output_fields")
        allowed: Any = contract.get("allowed_policy_fields")
        if not (_string_list(output_fields) and output_fields and _string_list(allowed)):
            return _reject("contract output_fields / allowed_policy_fields are malformed")
        if not isinstance(raw_output, Mapping):
            return _reject("adapter output is not an object")
        problems = [
            f"{name}: missing" if name not in raw_output else f"{name}: not a boolean"
            for name in output_fields
            if type(raw_output.get(name)) is not bool
        ]
        if problems:
            return _reject(*problems)
        # Only allowed fields the contract also declares, in sorted order (fail closed).
        chosen = sorted(set(allowed) & set(output_fields))
        return ValidationResult("accepted", {name: raw_output[name] for name in chosen}, ())


def _string_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def boolean_validator_family() -> tuple[Validator, ...]:
    """Every version of ``starter_boolean_validator`` (the entry point pyproject declares)."""
    return (BooleanValidator(BOOLEAN_VALIDATOR_NAME, "1.0.0"),)


Family = Callable[[], Iterable[Validator]]


@runtime_checkable
class ValidatorPlugins(Protocol):
    """Validator families a caller offers beyond the built-ins (e.g. the installed entry points,
    :func:`affidavit.attest.plugins.installed_validators`)."""

    def names(self) -> Iterable[str]: ...  # every name a family is offered for

    def family(self, name: str) -> Family | None:
        """The family of ``name``, or None.

        Raises:
            ``validator.load_failed``: it cannot be loaded or is ambiguous.
        """
        ...


_BUILTIN_FAMILIES: Final[dict[str, Family]] = {BOOLEAN_VALIDATOR_NAME: boolean_validator_family}


class ValidatorRegistry:
    """Validators by ``(name, version)``: built-in families (or ``families``), then the caller's
    ``plugins`` (asked lazily, once per name)."""

    def __init__(
        self,
        families: Mapping[str, Family] | None = None,
        *,
        plugins: ValidatorPlugins | None = None,
    ) -> None:
        self._families = dict(_BUILTIN_FAMILIES if families is None else families)
        self._plugins = plugins
        self._loaded: dict[str, dict[str, Validator]] = {}

    def get(self, name: str, version: str) -> Validator | None:
        """The validator ``(name, version)``, or None when none is installed.

        Raises:
            ``validator.load_failed``: a family or entry point for ``name`` fails to load, is
                ambiguous, or yields something that is not a validator of that name.
        """
        return self._versions(name).get(version)

    def known(self) -> tuple[tuple[str, str], ...]:
        """Every ``(name, version)`` available, sorted; asks the plug-ins for all their names."""
        names = set(self._families)
        if self._plugins is not None:
            names.update(self._plugins.names())
        return tuple(sorted((n, v) for n in names for v in self._versions(n)))

    def _versions(self, name: str) -> dict[str, Validator]:
        if name not in self._loaded:
            self._loaded[name] = self._load(name)
        return self._loaded[name]

    def _load(self, name: str) -> dict[str, Validator]:
        family = self._families.get(name)
        if family is None and self._plugins is not None:
            family = self._plugins.family(name)
        if family is None:
            return {}
        try:
            validators = tuple(family())
        except Exception as e:
            raise errors.ContractError(
                "validator.load_failed", f"validator family {name!r} failed: {e}"
            ) from e
        versions: dict[str, Validator] = {}
        for validator in validators:
            if not isinstance(validator, Validator) or validator.name != name:
                raise errors.ContractError(
                    "validator.load_failed",
                    f"validator family {name!r} yielded something that is not a {name} validator",
                )
            versions.setdefault(validator.version, validator)
        return versions


default_registry: Final = ValidatorRegistry()
