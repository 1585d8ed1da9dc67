"""Codes of the transforms room (``transform.*``), raised through
:class:`affidavit.verify.errors.ReceiptError`.

Exit codes: 2 (``INPUT``) for every one of them: a name that is not a transformation name, a name
with no implementation here, input the chain cannot read, or a plugin that cannot be loaded. None
of them means "does not verify"; the receipts room turns a mismatch into its own ``receipt.*`` code.
"""

from __future__ import annotations

from typing import Final

from affidavit.verify.code import FAILED, INPUT, Code

TRANSFORM: Final[tuple[Code, ...]] = (
    Code(
        "transform.name_invalid",
        INPUT,
        "Not a transformation name: neither a reserved name of RFC 002 §1.4 nor "
        "'<adapter>.<name>' (lowercase identifiers).",
    ),
    Code(
        "transform.not_utf8",
        INPUT,
        "The chain does not start with utf8_replace_invalid and the source bytes are not valid "
        "UTF-8 (strict decoding).",
    ),
    Code(
        "transform.plugin_conflict",
        INPUT,
        "An entry point of group 'affidavit.transforms' tries to replace one of the reference "
        "transformations; refused.",
    ),
    Code(
        "transform.plugin_invalid",
        INPUT,
        "An entry point of group 'affidavit.transforms' cannot be loaded, is not callable, or its "
        "name is not a transformation name.",
    ),
    Code(
        "transform.unimplemented",
        INPUT,
        "A declared transformation has no implementation here (an adapter-specific reserved name, "
        "or a plugin that is not installed); never replayed as the identity.",
    ),
)

__all__ = ["FAILED", "INPUT", "TRANSFORM"]
