"""``affidavit registry``: serve the registry, manage its API keys and store, probe it, publish
to it. ``serve`` opens the state before the server starts, so a refused start is one line and
exit 2 (docs/adr/0005).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from affidavit.attest.host import utc_now
from affidavit.cli._common import emit, emit_json, json_option, option_group, read_json_object
from affidavit.cli._serve import (
    Limits,
    json_lines_everywhere,
    listen,
    run,
    send_logs,
    stderr_handler,
)
from affidavit.cli.render.lineage import render_svg
from affidavit.cli.scitt import scitt_serve_options, with_scitt
from affidavit.registry.errors import AuthError
from affidavit.verify import errors
from affidavit.verify.json.forms import format_utc

if TYPE_CHECKING:
    from affidavit.attest.keyring import SigningKey
    from affidavit.verify.crypto.keys import Ed25519PublicKey

__all__ = ["registry"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def registry() -> None:
    """The registry service: discovery, publication, the transparency log and facts over HTTP."""


_T = TypeVar("_T")
_F = TypeVar("_F", bound=Callable[..., Any])


def _settings(**overrides: Any) -> Any:
    from affidavit.registry.settings import Settings  # noqa: PLC0415 - lazy: ~2 ms, not for probe, publish, --help

    return Settings.from_env(os.environ, **overrides)


def _data_dir_option(help: str) -> Callable[[_F], _F]:
    return click.option("--data-dir", type=click.Path(path_type=Path), default=None, help=help)


_database_url_option = click.option(
    "--database-url",
    default=None,
    metavar="URL",
    help="sqlite:///PATH or postgresql://USER@HOST:PORT/DB "
    "[default: $AFFIDAVIT_DATABASE_URL, else DATA_DIR/registry.db].",
)
# The store every operations command works on: the command takes them as ``**store``, for
# :func:`_settings`.
_store_options = option_group(_data_dir_option("The registry's data folder."), _database_url_option)


def _on_tables(store: dict[str, Any], call: Callable[[Any], _T]) -> _T:
    """``call`` of the store's registry tables (``open_tables``' key binding checks), closed
    afterwards."""
    from affidavit.registry.db import open_tables  # noqa: PLC0415 - lazy: ~50 ms, only the keys commands

    settings = _settings(**store)
    tables = open_tables(settings.database, key_dir=settings.key_dir)
    try:
        return call(tables)
    finally:
        tables.close()


@registry.command()
@click.option("--host", default=None, help="Address to bind [default: 127.0.0.1].")
@click.option("--port", type=int, default=None, help="Port [default: 8080].")
@_data_dir_option("Database and key folder.")
@_database_url_option
@click.option(
    "--contracts-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="*.adapter_contract.json folder.",
)
@click.option("--public-url", default=None, help="URL clients use (node probe node_url).")
@click.option("--access-log/--no-access-log", default=True, help="JSON access log on stderr.")
@click.option(
    "--log-format",
    type=click.Choice(["json", "text"]),
    default="json",
    show_default=True,
    envvar="AFFIDAVIT_LOG_FORMAT",
    help="stderr's lines: json (one object per line, for log shippers) or text (for people)"
    " [env: AFFIDAVIT_LOG_FORMAT].",
)
@click.option(
    "--witness",
    "witnesses",
    multiple=True,
    metavar="URL#VKEY",
    help="A C2SP witness that cosigns the log's checkpoints (repeatable) "
    "[default: $AFFIDAVIT_WITNESSES].",
)
@click.option(
    "--witness-interval",
    type=float,
    default=None,
    help="Seconds between cosigning rounds [default: 10].",
)
@scitt_serve_options
@json_option
def serve(  # noqa: PLR0917 - click passes options positionally
    host: str | None,
    port: int | None,
    data_dir: Path | None,
    database_url: str | None,
    contracts_dir: Path | None,
    public_url: str | None,
    access_log: bool,
    log_format: str,
    witnesses: tuple[str, ...],
    witness_interval: float | None,
    as_json: bool,
    **scitt_options: Any,
) -> None:
    """Run the registry (uvicorn) until SIGTERM or Ctrl-C; shuts down gracefully."""
    from affidavit.registry.app import create_app  # noqa: PLC0415 - lazy: the server stack only for serve
    from affidavit.registry.startup import open_state  # noqa: PLC0415 - lazy: the server stack only for serve

    settings = _settings(
        host=host,
        port=port,
        data_dir=data_dir,
        database_url=database_url,
        contracts_dir=contracts_dir,
        public_url=public_url,
        witnesses=witnesses or None,
        witness_interval_s=witness_interval,
    )
    settings = with_scitt(settings, **scitt_options)  # a bad issuer folder: one line, exit 2
    _configure_logging(access_log, log_format)
    # before anything else: one line, exit 2 (net.bind_failed, as witness serve)
    listener = listen(settings.host, settings.port, backlog=2048)
    state = open_state(settings)  # refusals: AffidavitError -> one line, exit 2

    app = create_app(settings, state=state, lineage_picture=render_svg)  # the explorer's pictures
    listening = f"http://{settings.host}:{listener.getsockname()[1]}"  # the bound port (0: any)
    if as_json:
        emit_json({"listening": listening, "data_dir": str(settings.data_dir)})
    banner = f"registry on {listening} (data {settings.data_dir})"
    if log_format == "json":  # one format on stderr (docs/postgresql.md "Operations")
        logging.getLogger("affidavit.registry").info(banner)
    elif not as_json:
        click.echo(banner, err=True)
    limits = Limits(settings.header_timeout_s, settings.max_connections)
    run(
        app,
        listener,
        host=settings.host,
        port=settings.port,
        keep_alive_s=settings.keep_alive_timeout_s,
        limits=limits,
    )


def _configure_logging(access_log: bool, log_format: str) -> None:
    """stderr in one format: JSON lines (every logger, uvicorn's included), or for people the
    access log's JSON, uvicorn's messages and ``LEVEL logger: message`` lines."""
    if log_format == "json":
        json_lines_everywhere("affidavit.registry", "affidavit.registry.access")
    else:
        send_logs(stderr_handler("%(message)s"), "affidavit.registry.access", "uvicorn")
        service = logging.getLogger("affidavit.registry")
        if not service.handlers:
            service.addHandler(stderr_handler("%(levelname)s %(name)s: %(message)s"))
            service.setLevel(logging.INFO)
    if not access_log:
        logging.getLogger("affidavit.registry.access").setLevel(logging.WARNING)


@registry.group()
def keys() -> None:
    """API keys: create (shown once), list, revoke."""


@keys.command("create")
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    required=True,
    help="admin | publish | log:write | facts:write | facts:read:<local|team|company|public|*> "
    "(repeatable).",
)
@click.option(
    "--publisher",
    "publishers",
    multiple=True,
    help="Adapter-id namespace a publish key may write, e.g. acme (repeatable; required "
    "with --scope publish).",
)
@click.option("--label", default="", help="A note for people (not secret).")
@_store_options
@json_option
def keys_create(
    scopes: tuple[str, ...],
    publishers: tuple[str, ...],
    label: str,
    as_json: bool,
    **store: Any,
) -> None:
    """Create an API key. The token is printed once; only its SHA-256 is stored.

    A publish key writes only contracts whose adapter_id lies in a --publisher namespace
    (acme covers acme.*); an admin key writes any, and the reserved channels.
    """
    from affidavit.registry.auth import (  # noqa: PLC0415 - lazy: ~7 ms, only the keys commands
        ApiKey,
        hash_token,
        new_token,
        parse_publisher,
        parse_scope,
        parse_token,
    )

    checked = tuple(dict.fromkeys(parse_scope(s) for s in scopes))
    bound = tuple(dict.fromkeys(parse_publisher(p) for p in publishers))
    if "publish" in checked and not bound:
        raise AuthError(
            "auth.bad_publisher",
            "a publish key must be bound to the adapter-id namespaces it may write: "
            "add --publisher PREFIX (e.g. --publisher acme), or use --scope admin for the operator",
        )
    if bound and "publish" not in checked:
        raise AuthError(
            "auth.bad_publisher", "--publisher applies only to keys with --scope publish"
        )
    token = new_token()
    key = ApiKey(
        key_id=parse_token(token).key_id,
        token_sha256=hash_token(token),
        scopes=checked,
        label=label,
        publishers=bound,
    )
    stamp = format_utc(utc_now())
    _on_tables(store, lambda tables: tables.add_api_key(key, stamp))
    document = {
        "key_id": key.key_id,
        "scopes": list(checked),
        "publishers": list(bound),
        "label": label,
        "api_key": token,
    }
    emit(as_json, document, token)
    if as_json:
        return
    click.echo(
        f"key {key.key_id} with scopes {', '.join(checked)}"
        + (f" for publishers {', '.join(bound)}" if bound else "")
        + ": store the token now, it is not shown again (export AFFIDAVIT_API_KEY=...)",
        err=True,
    )


@keys.command("bind")
@click.argument("key_id")
@click.option(
    "--publisher",
    "publishers",
    multiple=True,
    required=True,
    help="Adapter-id namespace the key may write (repeatable).",
)
@_store_options
@json_option
def keys_bind(
    key_id: str,
    publishers: tuple[str, ...],
    as_json: bool,
    **store: Any,
) -> None:
    """Bind a publish key (e.g. one created before bindings) to publisher namespaces."""
    from affidavit.registry.auth import parse_publisher  # noqa: PLC0415 - lazy: ~7 ms, only the keys commands

    bound = [parse_publisher(p) for p in publishers]
    found = _on_tables(store, lambda tables: tables.bind_api_key(key_id, bound))
    if not found:
        raise errors.UsageError(f"no active API key {key_id}")
    emit(as_json, {"key_id": key_id, "publishers": bound}, f"bound {key_id} to {', '.join(bound)}")


@keys.command("list")
@_store_options
@json_option
def keys_list(as_json: bool, **store: Any) -> None:
    """List key ids, scopes and labels (never tokens or digests)."""
    listed = _on_tables(store, lambda tables: tables.list_api_keys())
    emit(
        as_json,
        {"keys": listed},
        *(
            f"{item['key_id']}  {'revoked' if item['revoked'] else 'active':7}  "
            f"{','.join(item['scopes'])}  {','.join(item['publishers']) or '-'}  {item['label']}"
            for item in listed
        ),
    )


@keys.command("revoke")
@click.argument("key_id")
@_store_options
@json_option
def keys_revoke(key_id: str, as_json: bool, **store: Any) -> None:
    """Revoke a key by its id; requests with it fail with auth.invalid from then on."""
    found = _on_tables(store, lambda tables: tables.revoke_api_key(key_id))
    if not found:
        raise errors.UsageError(f"no API key {key_id}")
    emit(as_json, {"key_id": key_id, "revoked": True}, f"revoked {key_id}")


_REGISTRY_OPTION = click.option(
    "--registry",
    "registry_url",
    default=None,
    help="Registry URL [default: $AFFIDAVIT_REGISTRY_URL].",
)


@registry.command()
@_REGISTRY_OPTION
@json_option
def probe(registry_url: str | None, as_json: bool) -> None:
    """Probe a registry node (GET /.well-known/affidavit); exit 2 when it fails."""
    from affidavit.registry.clients.registry import require_node  # noqa: PLC0415 - lazy: httpx (~35 ms), registry calls only

    node = require_node(registry_url)
    text = f"{node.url}: node {node.node_id} version {node.version} auth={node.auth}"
    emit(as_json, dict(node.document), text)


@registry.command()
@click.argument("contract")
@_REGISTRY_OPTION
@click.option(
    "--api-key", default=None, help="API key with scope publish [default: $AFFIDAVIT_API_KEY]."
)
@json_option
def publish(contract: str, registry_url: str | None, api_key: str | None, as_json: bool) -> None:
    """Publish CONTRACT (a path, or - for stdin) to a registry; prints the signed entry."""
    from affidavit.registry.clients.registry import (  # noqa: PLC0415 - lazy: httpx (~35 ms), registry calls only
        RegistryClient,
        require_node,
    )

    declaration = read_json_object(contract, what="contract")
    node = require_node(registry_url)
    with RegistryClient(node.url, api_key=api_key) as client:
        result = client.publish(declaration)
    entry = result["entry"]
    emit(
        as_json,
        result,
        f"{'published' if result.get('created') else 'already published'} "
        f"{entry['adapter_id']}@{entry['adapter_version']} contract_hash {entry['contract_hash']} "
        f"entry_hash {entry['entry_hash']} leaf {result['leaf_index']} "
        f"tree_size {result['signed_tree_head']['tree_size']}",
    )


# -- operations: migrate, export, import (docs/postgresql.md) ---------------------------------


def _store_location(store: dict[str, Any]) -> str:
    return str(_settings(**store).database)


@registry.command("migrate")
@_store_options
@json_option
def migrate(as_json: bool, **store: Any) -> None:
    """Bring the store's schemas to this version (the service also does it at start)."""
    from affidavit.registry.dump import migrate_store  # noqa: PLC0415 - lazy: only here

    versions = migrate_store(_store_location(store))
    emit(
        as_json,
        {"ok": True, "schema": versions},
        *(f"{part}: schema {seen['before']} -> {seen['after']}" for part, seen in versions.items()),
    )


@registry.command("check")
@_store_options
@json_option
def check(as_json: bool, **store: Any) -> None:
    """List stored records the registry cannot index or read (exit 1 when there are any).

    Reads every fact and contract row in one snapshot and writes nothing; the service starts and
    serves the rest either way (docs/adr/0017-one-store-contract.md).
    """
    from affidavit.registry.integrity import check_location  # noqa: PLC0415 - lazy: only here

    report = check_location(_store_location(store))
    verdict = "ok" if report.ok else f"{len(report.problems)} records cannot be indexed or read"
    emit(
        as_json,
        report.to_json(),
        *(f"{p.kind} {p.id}: {p.code}: {p.message}" for p in report.problems),
        f"{report.facts} facts ({report.unindexed} to index at the next start), "
        f"{report.contracts} contracts: {verdict}",
    )
    click.get_current_context().exit(0 if report.ok else 1)


@registry.command("reindex")
@_store_options
@json_option
def reindex(as_json: bool, **store: Any) -> None:
    """Rebuild the lookup index from the log's own entries (GET /v1/lookup).

    Empties the index, then files every leaf again, 1,000 per transaction; a running registry
    keeps answering (it indexes what a lookup needs first). docs/transparency.md "Lookup".
    """
    from affidavit.attest.stores.store import Store  # noqa: PLC0415 - lazy: only here
    from affidavit.registry.lookup import reindex as rebuild  # noqa: PLC0415 - lazy: only here

    opened = Store.at(_store_location(store))
    try:
        report = rebuild(opened)
    finally:
        opened.close()
    emit(
        as_json,
        {"ok": True, **report},
        f"indexed {report['entries']} entries ({report['rows']} rows) of a log of "
        f"{report['tree_size']}",
    )


@registry.command("export")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@_store_options
@json_option
def export_command(directory: Path, as_json: bool, **store: Any) -> None:
    """Write a portable, signed dump of the store into the new folder DIRECTORY.

    The manifest is signed with the registry's key (DATA_DIR/keys/<key-id>.key), the log's key.
    """
    from affidavit.registry.dump import export_store  # noqa: PLC0415 - lazy: only here

    settings = _settings(**store)
    key = _registry_key(
        settings,
        "{path}: no registry key to sign the export with (the registry makes it on its first"
        " start; give the data folder it runs with)",
    )
    manifest = export_store(str(settings.database), directory, signing_key=key)
    log, counts, signer = manifest["log"], manifest["counts"], key.public_key.b64
    emit(
        as_json,
        {"ok": True, "directory": str(directory), "signed_by": signer, "manifest": manifest},
        f"exported {log['log_id']} (tree size {log['tree_size']}, root {log['root_hash']}), "
        f"{counts['registry_contracts']} contracts, {counts['facts']} facts into {directory},"
        f" signed by {signer}",
    )


@registry.command("import")
@click.argument("directory", type=click.Path(file_okay=False, exists=True, path_type=Path))
@_store_options
@click.option(
    "--log-key",
    default=None,
    metavar="FILE",
    help="The log's public key file the dump must be signed by "
    "[default: the data folder's key, DATA_DIR/keys/<key-id>.key].",
)
@json_option
def import_command(
    directory: Path,
    log_key: str | None,
    as_json: bool,
    **store: Any,
) -> None:
    """Prove a dump under the trusted log key, then restore it into an empty store.

    Nothing is written unless the manifest's signature, every file's hash and row count, the log
    from each leaf to the signed root, its checkpoint and every recorded head verify (exit 1
    otherwise; exit 2 for a dump that cannot be read).
    """
    from affidavit.registry.dump import import_store  # noqa: PLC0415 - lazy: only here

    settings = _settings(**store)
    trusted = _trusted_log_key(settings, log_key)
    result = import_store(str(settings.database), directory, trusted_key=trusted)
    emit(
        as_json,
        {"ok": True, **result},
        f"imported tree size {result['tree_size']}, root {result['root_hash']} (unchanged), "
        f"{result['counts']['registry_contracts']} contracts, {result['counts']['facts']} facts; "
        f"signed by the trusted key {result['trusted_key']}",
    )


def _trusted_log_key(settings: Any, log_key: str | None) -> Ed25519PublicKey:
    """The key an import trusts: ``--log-key FILE``, else the public half of the destination
    data folder's own key; never a key the dump names."""
    from affidavit.attest.keyring import load_public_key  # noqa: PLC0415 - lazy

    if log_key is not None:
        return load_public_key(log_key)
    missing = (
        "no trusted log key: {path} does not exist; pass --log-key FILE (the log's public key)"
        " or put the registry's key folder in place"
    )
    return _registry_key(settings, missing).public_key


def _registry_key(settings: Any, missing: str) -> SigningKey:
    """The registry's own signing key, DATA_DIR/keys/<key-id>.key (never world-readable).

    Raises:
        ``usage.invalid``: no such file (``missing``, with ``{path}``, says what it was for).
        ``key.*``: the file is not a private key, or others can read it.
    """
    from affidavit.attest.keyring import load_signing_key  # noqa: PLC0415 - lazy

    path = settings.key_dir / f"{settings.key_id}.key"
    if not path.is_file():
        raise errors.UsageError(missing.format(path=path))
    return load_signing_key(path, refuse_world_readable=True, key_id=settings.key_id)
