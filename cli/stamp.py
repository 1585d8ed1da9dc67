"""``affidavit stamp``: validate an adapter output, decide by policy, log it, write a bundle;
``stamp batch`` stamps many under one signed tree head.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import click
from affidavit.attest.files import atomic_write
from affidavit.attest.host import utc_now
from affidavit.cli._common import (
    emit,
    json_option,
    log_write_key_option,
    option_group,
    read_json,
    read_json_object,
)
from affidavit.verify import errors

__all__ = ["stamp"]

F = TypeVar("F", bound=Callable[..., Any])


def _when(text: str | None) -> datetime:
    if text is None:
        return utc_now()  # the CLI reads the clock; the library takes time as an argument
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise errors.UsageError(f"--time {text!r} is not an RFC 3339 time") from None
    if moment.tzinfo is None:
        raise errors.UsageError("--time needs a zone, e.g. 2026-01-01T00:00:00Z")
    return moment


class _Required(click.Option):
    """An option help marks ``[required]`` that click cannot require: ``stamp batch`` takes it
    from ``stamp`` or itself, so :func:`_require` checks it once the command line is read.
    ``when``: the options only one deal needs say so (stamp batch needs none of them)."""

    def __init__(self, *args: Any, when: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.when = when

    def get_help_extra(self, ctx: click.Context) -> Any:
        return {**super().get_help_extra(ctx), "required": f"required{self.when}"}


def _file(*names: str, help: str, when: str = "") -> Callable[[F], F]:
    return click.option(
        *names, cls=_Required, when=when, type=click.Path(dir_okay=False), help=help
    )


_ONE_DEAL = " for one deal"


# The options of stamp and stamp batch alike (batch also takes them from stamp).
_common_options = option_group(
    _file("--contract", help="AdapterContract."),
    _file("--policy", help="AcceptancePolicy."),
    _file("--log", "log_path", help="Log DB or registry URL."),
    click.option(
        "--key",
        "key_path",
        type=click.Path(dir_okay=False),
        help="Log key (the private .key file) [required with a log DB].",
    ),
    log_write_key_option,
    click.option("--actor-key", type=click.Path(dir_okay=False), help="Actor key (3.0.0)."),
    click.option("--actor-id", default=None, help="Actor id recorded on the events."),
    click.option("--time", "time_text", default=None, help="Stamping time (RFC 3339)."),
    click.option(
        "--swarm-designate",
        "swarm_designate",
        multiple=True,
        metavar="EVENT_TYPE",
        help="Designate an event type that --profile swarm-strict requires actor-signed"
        " (repeatable; adds a signed SWARM_POLICY_SET event; needs --actor-key).",
    ),
    click.option(
        "--swarm-snapshot",
        is_flag=True,
        help="Also write the hash-committed swarm_enforcement snapshot section.",
    ),
    click.option("--force", is_flag=True, help="Overwrite existing bundle files."),
    json_option,
)


def _require(**values: Any) -> None:
    missing = [f"--{k.replace('_', '-')}" for k, v in values.items() if v is None]
    if missing:
        raise errors.UsageError(
            f"missing option(s): {', '.join(missing)}", code="usage.missing_argument"
        )


def _run(
    options: dict[str, Any], items: list[tuple[str, Any, Path]]
) -> list[tuple[Path, dict[str, Any]]]:
    """Load everything, stamp, write: (path, bundle) pairs."""
    from affidavit.attest.keyring import load_signing_key  # noqa: PLC0415 - lazy
    from affidavit.attest.stamp import StampItem, SwarmOptions  # noqa: PLC0415 - lazy
    from affidavit.verify.contracts.policy import AcceptancePolicy  # noqa: PLC0415 - lazy

    if options["actor_key"] is not None and not options["actor_id"]:
        raise errors.UsageError("--actor-key needs --actor-id")
    from affidavit.registry.clients.log_entries import is_registry_url  # noqa: PLC0415 - lazy

    remote = is_registry_url(options["log_path"])
    if remote and options["key_path"] is not None:
        raise errors.UsageError("--key signs a local log; with --log URL the registry signs")
    if not remote and options["api_key"] is not None:
        raise errors.UsageError("--api-key goes with --log URL (a registry)")
    if not remote:
        _require(key=options["key_path"])
    for _, _, out in items:
        if out.exists() and not options["force"]:
            raise errors.ParseError(
                "io.exists", f"{out} exists; refusing to overwrite (use --force)"
            )
    contract = read_json_object(options["contract"], what="contract")
    policy = AcceptancePolicy.from_json(read_json(options["policy"]))
    actor_key = options["actor_key"]
    stamping = {
        "actor_key": None if actor_key is None else load_signing_key(actor_key),
        "when": _when(options["time_text"]),
        "actor_id": options["actor_id"] or "affidavit",
        "swarm": SwarmOptions(tuple(options["swarm_designate"]), options["swarm_snapshot"]),
    }
    stamp_items = [StampItem(deal_id, contract, raw) for deal_id, raw, _ in items]
    if remote:
        bundles = _stamp_remote(
            options["log_path"], options["api_key"], stamp_items, policy, stamping
        )
    else:
        bundles = _stamp_local(options, stamp_items, policy, stamping)
    written = [(out, bundle) for (_, _, out), bundle in zip(items, bundles, strict=True)]
    for out, bundle in written:
        atomic_write(out, (json.dumps(bundle, indent=2) + "\n").encode("utf-8"))
    return written


def _stamp_local(
    options: dict[str, Any], items: list[Any], policy: Any, stamping: dict[str, Any]
) -> list[dict[str, Any]]:
    """Stamp into the log DB: one append, one signed tree head."""
    from affidavit.attest.keyring import load_signing_key  # noqa: PLC0415 - lazy
    from affidavit.attest.log.state import state_path  # noqa: PLC0415 - lazy
    from affidavit.attest.log.transparency import TransparencyLog  # noqa: PLC0415 - lazy
    from affidavit.attest.stamp import stamp_bundles  # noqa: PLC0415 - lazy

    key = load_signing_key(options["key_path"], refuse_world_readable=False)
    with TransparencyLog.open(options["log_path"], key) as log:
        # The key's signed state binds it to this log: a rolled-back store is refused (ADR 0005).
        log.bind_state(state_path(Path(options["key_path"]).resolve(), log.log_id))
        return stamp_bundles(log, items, policy, **stamping)


def _stamp_remote(
    url: str, api_key: str | None, items: list[Any], policy: Any, stamping: dict[str, Any]
) -> list[dict[str, Any]]:
    """Stamp through a registry: each finality leaf appended (``POST /v1/log/entries``) and
    proven, then its bundle finished with the inclusion proof and that signed tree head."""
    from affidavit.attest.stamp import (  # noqa: PLC0415 - lazy
        draft_bundles,
        finality_leaf,
        finish_bundle,
    )
    from affidavit.registry.clients.log_entries import append_all  # noqa: PLC0415 - lazy

    drafts = draft_bundles(items, policy, **stamping)  # every check before anything is sent
    proven = append_all(url, [finality_leaf(d) for d in drafts], api_key=api_key)
    return [
        finish_bundle(draft, entry.inclusion, entry.signed_tree_head)
        for draft, entry in zip(drafts, proven, strict=True)
    ]


def _report(written: list[tuple[Path, dict[str, Any]]], as_json: bool) -> None:
    rows = [
        {
            "out": str(path),
            "deal_id": bundle["deal_id"],
            "spec_version": bundle["spec_version"],
            "decision": bundle["events"][-1]["payload"]["decision"],
            "bundle_hash": bundle["bundle_hash"],
            "leaf_index": bundle["merkle_inclusion"]["leaf_index"],
            "tree_size": bundle["signed_tree_head"]["tree_size"],
        }
        for path, bundle in written
    ]
    emit(
        as_json,
        {"ok": True, "bundles": rows},
        *(
            f"{row['out']}: {row['deal_id']} {row['decision']} (spec {row['spec_version']}, "
            f"leaf {row['leaf_index']} of {row['tree_size']})"
            for row in rows
        ),
    )


@click.group("stamp", invoke_without_command=True)
@_common_options
@_file("--adapter-output", help="Raw adapter output.", when=_ONE_DEAL)
@click.option("--deal-id", cls=_Required, when=_ONE_DEAL, default=None, help="Deal id.")
@_file("--out", help="Bundle file to write.", when=_ONE_DEAL)
@click.pass_context
def stamp(ctx: click.Context, /, **options: Any) -> None:
    """Stamp one deal into a ProofPack bundle (or many with stamp batch).

    Options marked [required] are needed by both; those [required for one deal] only
    without batch. stamp batch takes --contract, --policy, --log and --key from here or
    after batch.
    """
    ctx.obj = options
    if ctx.invoked_subcommand is not None:
        return
    _require(
        contract=options["contract"],
        adapter_output=options["adapter_output"],
        policy=options["policy"],
        deal_id=options["deal_id"],
        log=options["log_path"],
        out=options["out"],
    )
    raw = read_json(options["adapter_output"])
    written = _run(options, [(options["deal_id"], raw, Path(options["out"]))])
    _report(written, options["as_json"])


@stamp.command("batch")
@_common_options
@click.option("--out-dir", type=click.Path(file_okay=False), required=True, help="Output folder.")
@click.option("--deal-prefix", default="", help="Prefix of each deal id (id = prefix + stem).")
@click.argument("outputs", nargs=-1, required=True)
@click.pass_context
def batch(ctx: click.Context, /, outputs: tuple[str, ...], **options: Any) -> None:
    """Stamp many adapter outputs under one signed tree head."""
    parent: dict[str, Any] = ctx.obj or {}
    merged: dict[str, Any] = {}
    for name, value in options.items():
        unset = value is None or value is False or value == ()
        merged[name] = parent.get(name, value) if unset else value
    _require(contract=merged["contract"], policy=merged["policy"], log=merged["log_path"])
    folder = Path(merged["out_dir"])
    folder.mkdir(parents=True, exist_ok=True)
    items = [
        (merged["deal_prefix"] + Path(p).stem, read_json(p), folder / f"{Path(p).stem}.bundle.json")
        for p in outputs
    ]
    stems = [item[0] for item in items]
    if len(set(stems)) != len(stems):
        raise errors.UsageError("two adapter outputs have the same file stem")
    _report(_run(merged, items), merged["as_json"])
