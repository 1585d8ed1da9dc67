"""``affidavit facts pull URL --out FILE.jsonl``: a Stigmem node's facts, ready to audit
(docs/formats.md "Facts", "Stigmem node shapes").
"""

from __future__ import annotations

import click
from affidavit.attest.files import atomic_write
from affidavit.cli._common import emit, exit_with, json_option
from affidavit.cli.facts.group import finding_lines
from affidavit.verify import errors
from affidavit.verify.json.canonical import jcs
from affidavit.verify.lineage.audit import Finding
from affidavit.verify.lineage.stigmem import map_node_records

__all__ = ["pull_command"]


@click.command("pull")
@json_option
@click.argument("url", metavar="URL")
@click.option(
    "--api-key",
    default=None,
    metavar="KEY",
    envvar="STIGMEM_API_KEY",
    help="The node's API key, sent as Authorization: Bearer (or STIGMEM_API_KEY).",
)
@click.option(
    "--out", "out_path", required=True, metavar="FILE.jsonl", help="Where to write the facts."
)
@click.option(
    "--include-contradicted",
    is_flag=True,
    help="Also pull facts the node marks contradicted (recorded under stigmem.contradicted).",
)
@click.option(
    "--timeout", type=click.FloatRange(0.1, 600), default=30.0, show_default=True, help="Seconds."
)
@click.option(
    "--page-size",
    type=click.IntRange(1, 500),
    default=500,
    show_default=True,
    help="Facts per page (the node's maximum is 500).",
)
def pull_command(  # noqa: PLR0917 - click passes options positionally by name
    as_json: bool,
    url: str,
    api_key: str | None,
    out_path: str,
    include_contradicted: bool,
    timeout: float,
    page_size: int,
) -> None:
    """Pull a Stigmem node's facts into FILE.jsonl (then: facts add / facts audit)."""
    from affidavit.registry.clients.stigmem import fetch_node_facts  # noqa: PLC0415 - httpx

    listing = fetch_node_facts(
        url,
        api_key=api_key,
        include_contradicted=include_contradicted,
        page_size=page_size,
        timeout=timeout,
    )
    report = map_node_records(listing.records)
    if listing.pages > 1:  # the node's cursor cannot prove the listing complete
        report.findings.append(
            Finding(
                "stigmem.paging_unreliable",
                "error",
                url,
                None,
                f"the node needed {listing.pages} pages; its cursor selects id > cursor while it "
                f"sorts by timestamp, so facts may have been skipped ({listing.repeated} "
                "repeated records were dropped)",
                {"pages": listing.pages, "repeated": listing.repeated},
            )
        )
    if not report.records:
        raise errors.LineageError(
            "fact.input_empty", f"{url}: no facts read (the node lists none for this key)"
        )
    # 0600: a node's facts may be of any scope
    atomic_write(out_path, b"".join(jcs(d) + b"\n" for d in report.documents), mode=0o600)
    verdict = "ok" if report.ok else f"{len(report.findings)} finding(s)"
    emit(
        as_json,
        {**report.to_json(), "out": out_path, "fact_hashes": report.hashes},
        *finding_lines(report),
        f"pulled {report.records} records, wrote {len(report.documents)} facts "
        f"to {out_path}: {verdict}",
    )
    exit_with(0 if report.ok else 1)
