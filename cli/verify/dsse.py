"""``affidavit verify dsse``: a DSSE envelope carrying an in-toto Statement v1, offline.

::

    affidavit verify dsse FILE|- TRUST... [--threshold N] [--bundle BUNDLE] [--json]

Trust comes only from the caller, through the trust options every verify verb takes
(:mod:`affidavit.cli._trust`: ``--public-key-base64 K``, ``--public-key FILE``, ``--trusted-keys
DIR``, ...); at least one key (fail closed). The envelope's ``keyid`` is a hint, never trusted.

The steps and the verdict are the library's (:func:`affidavit.verify.dsse.verify.check_envelope`):
envelope, signatures, statement, and with ``--bundle`` cross_check; the text is
:mod:`affidavit.cli.render.verdict`'s.

Exit codes: 0 verified (every step ``ok``); 1 not verified (``dsse.*`` and
``statement.*`` failures, and ``bundle.hash_mismatch`` for a bundle inconsistent with itself); 2
unreadable input or usage (a bad envelope, key, bundle, threshold, a bundle recording no decision,
or ``--bundle`` with a predicate type that cannot be cross-checked). ``--json`` prints one document
(``specs/output/verify-dsse.schema.json``) for exit 0 and 1, and for an unreadable envelope.
"""

from __future__ import annotations

from typing import Any

import click
from affidavit.cli._common import json_option, print_outcome, read_input, read_json
from affidavit.cli._trust import read_trust, trust_options
from affidavit.verify import errors
from affidavit.verify.results import Result

__all__ = ["dsse"]


@click.command("dsse")
@click.argument("source", metavar="FILE|-")
@trust_options
@click.option(
    "--threshold",
    type=int,
    default=1,
    show_default=True,
    help="Distinct trusted keys that must each verify a signature.",
)
@click.option(
    "--bundle",
    "bundle_file",
    type=click.Path(dir_okay=False),
    help="The ProofPack bundle a decision Statement summarizes: cross-check subject and predicate.",
)
@json_option
def dsse(
    *,
    source: str,
    threshold: int,
    bundle_file: str | None,
    as_json: bool,
    **trust_options: Any,
) -> None:
    """Verify a DSSE envelope and the in-toto Statement v1 it carries, under trusted keys."""
    from affidavit.verify.dsse.envelope import MAX_ENVELOPE_BYTES  # noqa: PLC0415 - lazy
    from affidavit.verify.dsse.verify import NO_BUNDLE, check_envelope  # noqa: PLC0415 - lazy

    trust = read_trust(**trust_options, needed_by="verify dsse")
    keys = trust.public_keys
    bundle = NO_BUNDLE if bundle_file is None else _read_bundle(bundle_file)
    too_large = (errors.EnvelopeError, "dsse.too_large")
    try:
        data = read_input(source, max_bytes=MAX_ENVELOPE_BYTES, too_large=too_large)
    except errors.EnvelopeError as e:
        result = Result.unreadable_input("dsse", source, e)
    else:
        result = check_envelope(data, keys, threshold=threshold, bundle=bundle, source=source)
    print_outcome(result, as_json=as_json, extra={"trust": trust.to_json()})


def _read_bundle(path: str) -> Any:
    return read_json(path)
