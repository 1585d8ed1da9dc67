"""The ProofPack v2 ``policy_layer``: recorded commercial context, shown, never trusted.

>>> view_policy_layer({"policy_layer": {"sla": {"delivery_hours": 24}}})["sections"]
['sla']

``policy_layer`` sits outside ``bundle_hash`` (docs/formats.md §4): anyone holding the bundle can
edit
it without breaking any hash or signature. It is parsed like the peer's ProofPack v2 reader
(sections ``sla``, ``mandate``, ``spawn``, ``attestation``, ``outcome`` as objects, and a non-empty
``referral_chain`` array) and shown in the reports (``cli/render/verdict.py`` writes the text),
marked ``covered_by_bundle_hash: false`` and ``used_in_verdict: false``. Nothing in it reaches a
verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["NOTE", "view_policy_layer"]

SECTIONS: Final = ("sla", "mandate", "spawn", "attestation", "outcome")
NOTE: Final = (
    "recorded values outside bundle_hash: not covered by any hash or signature, not used in the "
    "verdict"
)


def view_policy_layer(bundle: Mapping[str, Any]) -> dict[str, Any] | None:
    """The report's ``policy_layer`` object, or None when the bundle has no ``policy_layer`` key."""
    if "policy_layer" not in bundle:
        return None
    layer = bundle["policy_layer"]
    view: dict[str, Any] = {"version": "1.0", "has_policy": False, "sections": []}
    if isinstance(layer, dict) and layer:
        view.update(version="2.0", has_policy=True)
        for name in SECTIONS:
            value = layer.get(name)
            if isinstance(value, dict) and value:
                view[name] = value
                view["sections"].append(name)
        chain = layer.get("referral_chain")
        if isinstance(chain, list) and chain:
            view["referral_chain"] = chain
            view["sections"].append("referral_chain")
    view.update(covered_by_bundle_hash=False, used_in_verdict=False, note=NOTE)
    return view
