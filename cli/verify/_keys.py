"""The trusted-key options of the newer ``verify`` commands (``dsse``, ``receipt``), declared once.

``--public-key-base64 K`` (repeatable) and ``--trusted-keys DIR`` read keys exactly as
``verify bundle`` reads them (:mod:`affidavit.verify.crypto.trusted_keys`): every key is checked
where it enters, a bad one is exit 2, and a windowed key document is refused
(``key.window_unsupported``). Trust comes only from these options.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click
from affidavit.verify import errors
from affidavit.verify.crypto.keys import Ed25519PublicKey

__all__ = ["key_options", "trusted_keys"]

F = TypeVar("F", bound=Callable[..., Any])


def key_options(f: F) -> F:
    """``--public-key-base64`` (``keys_b64``) and ``--trusted-keys`` (``trusted_dir``)."""
    f = click.option(
        "--trusted-keys",
        "trusted_dir",
        type=click.Path(file_okay=False),
        metavar="DIR",
        help="Folder of trusted public keys (*.pub, *.json, *.pem).",
    )(f)
    return click.option(
        "--public-key-base64",
        "keys_b64",
        multiple=True,
        help="A trusted Ed25519 public key, standard base64 (repeatable).",
    )(f)


def trusted_keys(
    keys_b64: tuple[str, ...], trusted_dir: str | None, *, exactly_one: bool = False
) -> list[Ed25519PublicKey]:
    """The distinct trusted keys the options name, in the order given.

    With ``exactly_one``, exactly one of the two options must be given (fail closed: a command
    that can verify nothing without a key refuses to run keyless, and one source of trust is
    never silently widened by the other).

    Raises:
        UsageError: ``exactly_one`` and none or both given. ``key.*``, ``io.*``: a bad key.
    """
    from affidavit.verify.crypto.trusted_keys import key_from_base64, load_key_folder  # noqa: PLC0415 - lazy (cold start)

    if exactly_one and bool(keys_b64) == (trusted_dir is not None):
        raise errors.UsageError(
            "give trusted keys with exactly one of --public-key-base64 K (repeatable) and "
            "--trusted-keys DIR"
        )
    keys = [key_from_base64(text) for text in keys_b64]
    if trusted_dir is not None:
        keys.extend(trusted.key for trusted in load_key_folder(trusted_dir))
    return list(dict.fromkeys(keys))
