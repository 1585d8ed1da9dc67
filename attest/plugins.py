"""The plug-ins installed in this environment: validators (entry-point group
``affidavit.validators``) and declared transformations (``affidavit.transforms``).

``affidavit.verify`` reads no entry point (style.md §8): the callers that trust what is installed
(the command line, the stamp) read the plug-ins here and pass them in. Entry points are read only
when a name is not built in, since that reads every installed distribution's metadata.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from affidavit.verify import errors
from affidavit.verify.contracts.validators import ENTRY_POINT_GROUP as VALIDATOR_GROUP
from affidavit.verify.contracts.validators import Family, ValidatorRegistry
from affidavit.verify.transforms.chain import ENTRY_POINT_GROUP as TRANSFORM_GROUP
from affidavit.verify.transforms.chain import Transform, TransformSet, check_name
from affidavit.verify.transforms.reference import RESERVED_REFERENCE

__all__ = ["InstalledValidators", "available_transforms", "installed_validators", "transforms_for"]


# -- validators ---------------------------------------------------------------------------------


def _entry_points(group: str = VALIDATOR_GROUP) -> list[Any]:
    """The installed entry points of ``group``, by name and value."""
    import importlib.metadata  # noqa: PLC0415 - cold start: only when a plug-in is needed

    return sorted(
        importlib.metadata.entry_points(group=group), key=lambda point: (point.name, point.value)
    )


class InstalledValidators:
    """The validator families of the installed entry points
    (:class:`~affidavit.verify.contracts.validators.ValidatorPlugins`)."""

    def names(self) -> Iterable[str]:
        """Every entry point's name."""
        return [point.name for point in _entry_points()]

    def family(self, name: str) -> Family | None:
        """The family the one entry point named ``name`` offers, or None.

        Raises:
            ``validator.load_failed``: two distributions claim ``name``, or its entry point does
                not load or is not callable.
        """
        points = {point.value: point for point in _entry_points() if point.name == name}
        if not points:
            return None
        if len(points) > 1:  # two distributions claim one name: refuse rather than pick one
            raise errors.ContractError(
                "validator.load_failed",
                f"validator {name!r} is provided by several entry points: "
                f"{', '.join(sorted(points))}",
            )
        (point,) = points.values()
        try:
            family = point.load()
        except Exception as e:
            raise errors.ContractError(
                "validator.load_failed", f"entry point {point.value!r} failed to load: {e}"
            ) from e
        if not callable(family):
            raise errors.ContractError(
                "validator.load_failed", f"entry point {point.value!r} is not a validator family"
            )
        return family  # type: ignore[no-any-return]


def installed_validators() -> ValidatorRegistry:
    """The built-in validators, then the installed plug-ins (read lazily, once per name)."""
    return ValidatorRegistry(plugins=InstalledValidators())


# -- transformations ----------------------------------------------------------------------------


@functools.cache
def available_transforms() -> TransformSet:
    """The reference transformations plus every installed plugin (every entry point of
    :data:`TRANSFORM_GROUP`), loaded once per process.

    Raises:
        ``transform.plugin_invalid``: an entry point fails to load, is not callable, or is not
            named as a transformation.
        ``transform.plugin_conflict``: an entry point names a reference transformation, or two
            entry points claim the same name.
    """
    found: dict[str, Transform] = {}
    origin: dict[str, str] = {}
    for ep in _entry_points(TRANSFORM_GROUP):
        name = ep.name
        try:
            check_name(name)
        except errors.ReceiptError:
            raise _invalid(ep, "is not a transformation name") from None
        if name in RESERVED_REFERENCE:
            raise errors.ReceiptError(
                "transform.plugin_conflict",
                f"entry point {ep.value} tries to replace the reference transformation {name!r}",
                details={"name": name, "value": ep.value},
            )
        if name in origin and origin[name] != ep.value:
            raise errors.ReceiptError(
                "transform.plugin_conflict",
                f"transformation {name!r} is registered twice ({origin[name]} and {ep.value})",
                details={"name": name, "value": ep.value},
            )
        try:
            fn = ep.load()
        except Exception as e:  # any failure of third-party import code is the plugin's fault
            raise _invalid(ep, f"cannot be loaded: {type(e).__name__}: {e}") from None
        if not callable(fn):
            raise _invalid(ep, "is not callable")
        origin[name] = ep.value
        found[name] = fn
    return TransformSet.of(found)


def _invalid(ep: Any, reason: str) -> errors.ReceiptError:
    return errors.ReceiptError(
        "transform.plugin_invalid",
        f"entry point {ep.name!r} ({ep.value}) {reason}",
        details={"name": ep.name, "value": ep.value},
    )


def transforms_for(names: Iterable[str]) -> TransformSet:
    """What to replay ``names`` with: the reference set, plus the plugins
    (:func:`available_transforms`) only when a name is not a reference one.

    Raises:
        ``transform.plugin_invalid``, ``transform.plugin_conflict``: as
            :func:`available_transforms`, when plugins are needed.
    """
    if set(RESERVED_REFERENCE).issuperset(names):
        return TransformSet.of()
    return available_transforms()
