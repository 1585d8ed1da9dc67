"""``affidavit witness``: a C2SP tlog-witness (https://c2sp.org/tlog-witness)."""

from __future__ import annotations

from pathlib import Path

import click
from affidavit.cli._common import AliasedOption, emit, emit_json, json_option
from affidavit.cli._serve import Limits, listen, run, send_logs, stderr_handler

__all__ = ["witness"]

_PATH = click.Path(dir_okay=False, path_type=Path)
_NAME_HELP = "Cosigner name (a note key name, e.g. witness.example.com/w1)."


@click.group("witness", context_settings={"help_option_names": ["-h", "--help"]})
def witness() -> None:
    """A transparency-log witness: cosigns checkpoints of the logs it trusts (C2SP)."""


@witness.command("keygen", hidden=True)
@click.option("--key", "key_file", type=_PATH, help="Write a new Ed25519 key here (PKCS#8 PEM).")
@click.option(
    "--ml-dsa-key", "ml_dsa_file", type=_PATH, help="Write a new ML-DSA-44 key here (PKCS#8 PEM)."
)
@click.option("--name", default=None, help=_NAME_HELP + " Prints the vkeys under it.")
@json_option
def keygen(
    key_file: Path | None, ml_dsa_file: Path | None, name: str | None, as_json: bool
) -> None:
    """Generate witness keys (hidden: keys generate --kind witness is its one name, issue 33)."""
    write_witness_keys(key_file, ml_dsa_file, name, as_json=as_json)


def write_witness_keys(
    key_file: Path | None, ml_dsa_file: Path | None, name: str | None, *, as_json: bool
) -> None:
    """Generate witness keys: mode 0600 files that are never overwritten (exit 2 if one exists);
    print the files written (stderr) and, under ``name``, the vkeys."""
    from affidavit.verify.crypto.checkpoint import check_key_name  # noqa: PLC0415 - lazy
    from affidavit.verify.tlog.cosignature import cosigner_vkey  # noqa: PLC0415 - lazy
    from affidavit.witness.cosigner import write_key_files  # noqa: PLC0415 - lazy

    if name is not None:
        check_key_name(name)  # the one rule of note key names
    made = write_key_files(key_file, ml_dsa_file)
    files = [str(p) for p in (key_file, ml_dsa_file) if p is not None]
    vkeys = [cosigner_vkey(name, a, public) for a, public in made] if name is not None else []
    for path in () if as_json else files:
        click.echo(f"wrote {path} (mode 0600; keep it secret)", err=True)
    emit(as_json, {"ok": True, "files": files, "vkeys": vkeys}, *vkeys)


@witness.command("vkey")
@click.option("--name", required=True, help=_NAME_HELP)
@click.option("--key", "key_file", required=True, type=_PATH, help="The Ed25519 key file.")
@click.option("--ml-dsa-key", "ml_dsa_file", type=_PATH, help="The ML-DSA-44 key file.")
@json_option
def vkey(name: str, key_file: Path, ml_dsa_file: Path | None, as_json: bool) -> None:
    """Print the cosigner verifier keys (type 0x04 Ed25519, then 0x06 ML-DSA-44) for policies
    and for log head --witness URL#VKEY."""
    from affidavit.witness.cosigner import load_witness_keys  # noqa: PLC0415 - lazy

    vkeys = load_witness_keys(name, key_file, ml_dsa_file).vkeys()
    emit(as_json, {"name": name, "vkeys": vkeys}, *vkeys)


@witness.command("serve")
@click.option("--name", required=True, help=_NAME_HELP)
@click.option("--key", "key_file", required=True, type=_PATH, help="The Ed25519 key file.")
@click.option("--ml-dsa-key", "ml_dsa_file", type=_PATH, help="Also cosign with ML-DSA-44.")
@click.option(
    "--log-vkey",
    "log_vkeys",
    multiple=True,
    required=True,
    help="A trusted log's verifier key (affidavit log vkey); its name is the origin. Repeatable.",
)
@click.option(
    "--data-dir",
    "--state",
    "state_dir",
    cls=AliasedOption,
    aliases=("--state",),  # the old spelling, kept for scripts (issue 33)
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The witness's data folder, holding witness.db (made 0700 when absent).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", type=click.IntRange(0, 65535), default=8081, show_default=True)
@click.option(
    "--header-timeout",
    "header_timeout_s",
    type=click.FloatRange(0, 3600, min_open=True),
    default=10.0,
    show_default=True,
    help="Seconds a connection has to send a whole request head, else it is closed.",
)
@click.option(
    "--max-connections",
    type=click.IntRange(1),
    default=None,
    help="Connections held at once [default: the descriptor limit less a reserve].",
)
@json_option
def serve(  # noqa: PLR0917 - click passes options positionally
    name: str,
    key_file: Path,
    ml_dsa_file: Path | None,
    log_vkeys: tuple[str, ...],
    state_dir: Path,
    host: str,
    port: int,
    header_timeout_s: float,
    max_connections: int | None,
    as_json: bool,
) -> None:
    """Run the witness (uvicorn) until SIGTERM or Ctrl-C: POST /add-checkpoint and
    GET /<origin hash>/checkpoint."""
    from affidavit.verify.crypto.checkpoint import parse_verifier_key  # noqa: PLC0415 - lazy
    from affidavit.witness.app import WitnessConfig, create_app, origin_paths  # noqa: PLC0415 - lazy
    from affidavit.witness.cosigner import (  # noqa: PLC0415 - lazy
        check_distinct,
        check_origins,
        load_witness_keys,
    )
    from affidavit.witness.state import WitnessState  # noqa: PLC0415 - lazy

    logs = tuple(dict.fromkeys(parse_verifier_key(v) for v in log_vkeys))
    keys = load_witness_keys(name, key_file, ml_dsa_file)
    check_distinct(keys, logs)
    check_origins(keys, logs)  # with --ml-dsa-key, origins of at most 255 bytes
    send_logs(stderr_handler("%(levelname)s %(name)s: %(message)s"), "affidavit.witness", "uvicorn")
    listener = listen(host, port, backlog=1024)  # a port in use: net.bind_failed, exit 2
    state = WitnessState.open(state_dir)  # refusals: AffidavitError -> one line, exit 2
    config = WitnessConfig(keys=keys, logs=logs, state_dir=state_dir)
    app = create_app(config, state=state)
    bound = listener.getsockname()
    banner = {
        "listening": f"http://{host}:{bound[1]}",
        "name": name,
        "vkeys": keys.vkeys(),
        "logs": origin_paths(list(config.trusted)),
        "state": str(state_dir),
    }
    if as_json:
        emit_json(banner)
    else:
        click.echo(f"witness {name} on {banner['listening']}", err=True)
    limits = Limits(header_timeout_s=header_timeout_s, max_connections=max_connections)
    run(app, listener, host=host, port=port, limits=limits)
