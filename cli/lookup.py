"""``affidavit lookup URL HASH``: what a registry's log holds about a hash, proven offline
(:mod:`affidavit.registry.clients.lookup`; docs/transparency.md "Lookup").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click
from affidavit.cli._common import emit, json_option
from affidavit.cli._trust import read_trust, trust_options
from affidavit.verify import errors
from affidavit.verify.json.forms import is_hex64

if TYPE_CHECKING:
    from affidavit.verify.results import Result

__all__ = ["lookup"]


@click.command("lookup")
@click.argument("url", metavar="URL")
@click.argument("digest", metavar="HASH")
@trust_options
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1, max=600),
    default=30.0,
    show_default=True,
    help="Seconds for the whole lookup, every page and leaf.",
)
@json_option
def lookup(url: str, digest: str, timeout: float, as_json: bool, **trust_options: Any) -> None:
    """Find every entry of a registry's log about HASH (64 lowercase hex) and prove each one.

    Trust the log's key with --vkey (name+keyid+base64, as log vkey prints it) or any other
    trust option; a bare key is named by the checkpoint's origin.
    """
    from affidavit.registry.clients.lookup import lookup as run_lookup  # noqa: PLC0415 - lazy: httpx only here

    if not is_hex64(digest):
        hint = " (hashes are lowercase)" if is_hex64(digest, any_case=True) else ""
        raise errors.UsageError(
            f"{digest[:80]!r} is not a hash: 64 lowercase hex characters{hint}; look a name up "
            "by the SHA-256 of its UTF-8"
        )
    trust = read_trust(**trust_options, needed_by="lookup")  # the log's key
    result = run_lookup(url, digest, trust, timeout=timeout)
    emit(as_json, {**result.document(), "trust": trust.to_json()}, *_lines(result))
    click.get_current_context().exit(result.exit_code)


def _lines(result: Result) -> list[str]:
    """The report for people, rendered from the result (style.md §17)."""
    subject = result.subject
    checkpoint = subject["checkpoint"] or {}
    where = (
        f"in {checkpoint.get('origin')} at size {checkpoint.get('tree_size')} (checkpoint signed"
        f" by {', '.join(checkpoint.get('verified_by', []))}"
    )
    others = checkpoint.get("other_signers") or []
    where += f"; cosigned by {', '.join(others)}, not checked here)" if others else ")"
    entries = subject["entries"]
    if result.verified:
        count = f"{len(entries)} {'entry' if len(entries) == 1 else 'entries'}"
        lines = [f"found: {count} about {subject['hash']} {where}"]
        lines.extend(
            f"  #{entry['index']}  {entry['kind']:<9} {', '.join(entry['matched']):<28} "
            f"leaf {entry['leaf_hash']}"
            for entry in entries
        )
        if subject["truncated"]:
            lines.append("  (more entries follow; only the first 1000 were read)")
        lines.append("  every inclusion proof and leaf verified against the trusted checkpoint")
        return lines
    failing = result.failed_step
    if failing is not None:
        return [f"not verified: {failing.name}: {failing.code}: {failing.message}"]
    if checkpoint:
        return [f"not found: no entry about {subject['hash']} {where}", f"  {result.message}"]
    return [f"not verified: {result.message}"]
