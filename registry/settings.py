"""Registry settings: embedded defaults, then ``AFFIDAVIT_*`` environment variables, then flags.

>>> s = Settings.from_env({"AFFIDAVIT_REGISTRY_PORT": "9000"}, host="127.0.0.1")
>>> s.port, s.node_url
(9000, 'http://127.0.0.1:9000')

The environment variables are :data:`_ENV` (each the field it sets); the defaults, the fields
of :class:`Settings`, where a comment says what a field means beyond its name (the contracts
directory as in seed 003).

Nothing here reads the environment unless :meth:`Settings.from_env` is called.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from affidavit.verify import errors

__all__ = ["Settings"]

_PUBLISHER_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")
_KEY_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")


def _boolean(text: str) -> bool:
    """``1``/``true``/``yes``/``on`` or ``0``/``false``/``no``/``off`` (any case)."""
    lowered = text.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ValueError(text)


# env variable -> (field name, parser)
_ENV: Final[dict[str, tuple[str, Callable[[str], Any]]]] = {
    "AFFIDAVIT_REGISTRY_HOST": ("host", str),
    "AFFIDAVIT_REGISTRY_PORT": ("port", int),
    "AFFIDAVIT_DATA_DIR": ("data_dir", Path),
    "AFFIDAVIT_DATABASE_URL": ("database_url", str),
    "AFFIDAVIT_ADAPTER_CONTRACTS_DIR": ("contracts_dir", Path),
    "AFFIDAVIT_NODE_ID": ("node_id", str),
    "AFFIDAVIT_PUBLIC_URL": ("public_url", str),
    "AFFIDAVIT_PUBLISHER_ID": ("publisher_id", str),
    "AFFIDAVIT_KEY_ID": ("key_id", str),
    "AFFIDAVIT_LOG_ID": ("log_id", str),
    "AFFIDAVIT_MAX_BODY_BYTES": ("max_body_bytes", int),
    "AFFIDAVIT_BODY_TIMEOUT": ("body_timeout_s", float),
    "AFFIDAVIT_KEEP_ALIVE_TIMEOUT": ("keep_alive_timeout_s", float),
    "AFFIDAVIT_HEADER_TIMEOUT": ("header_timeout_s", float),
    "AFFIDAVIT_MAX_CONNECTIONS": ("max_connections", int),
    "AFFIDAVIT_READ_THREADS": ("read_threads", int),
    "AFFIDAVIT_FACTS_STRICT_FORBIDDEN": ("facts_strict_forbidden", _boolean),
    "AFFIDAVIT_WALK_MAX_NODES": ("walk_max_nodes", int),
    "AFFIDAVIT_WALK_MAX_BYTES": ("walk_max_bytes", int),
    "AFFIDAVIT_WALK_MAX_SECONDS": ("walk_max_seconds", float),
    "AFFIDAVIT_WITNESSES": ("witnesses", lambda text: tuple(text.split())),  # URL#VKEY ...
    "AFFIDAVIT_WITNESS_INTERVAL": ("witness_interval_s", float),
    "AFFIDAVIT_WITNESS_TIMEOUT": ("witness_timeout_s", float),
    "AFFIDAVIT_WRITE_BATCH": ("write_batch", int),
    "AFFIDAVIT_LOG_QUEUE": ("log_queue", int),
    "AFFIDAVIT_INTEGRATE_INTERVAL": ("integrate_interval_s", float),
    "AFFIDAVIT_INTEGRATE_BATCH": ("integrate_batch", int),
    "AFFIDAVIT_INTEGRATION_WAIT": ("integration_wait_s", float),
}


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the registry needs to start; immutable once built.

    ``public_url`` is what documents link to (node probe ``node_url``, manifest and declaration
    URLs); when empty it is ``http://{host}:{port}``.
    """

    host: str = "127.0.0.1"
    port: int = 8080
    data_dir: Path = Path("data")
    database_url: str = ""  # "" = DATA_DIR/registry.db
    contracts_dir: Path = Path("data/adapter_contracts")
    node_id: str = "urn:affidavit:node:local"
    public_url: str = ""
    publisher_id: str = "affidavit-local"
    key_id: str = "registry-1"
    log_id: str = "affidavit-registry"
    max_body_bytes: int = 1024 * 1024  # a larger request body is 413
    entries_page_limit: int = 1000
    facts_page_limit: int = 1000
    body_timeout_s: float = 15.0  # for a whole body, else 408 http.body_timeout, connection closed
    keep_alive_timeout_s: float = 5.0
    # cli/_serve.py: the request-head timeout and the connection limit (None: the descriptors')
    header_timeout_s: float = 10.0
    max_connections: int | None = None
    read_threads: int = 2
    # docs/adr/0009-hidden-equals-absent.md: an unreadable provenance root answers exactly like an
    # absent one (404 fact_not_found); True restores seed 002 §20.6.2's 403.
    facts_strict_forbidden: bool = False
    # Provenance walk bounds (nodes, response bytes, wall time); beyond them truncated: true.
    walk_max_nodes: int = 10_000
    walk_max_bytes: int = 4 * 1024 * 1024
    walk_max_seconds: float = 2.0
    load_builtin_contracts: bool = True
    # C2SP witnesses (URL#VKEY) cosigning the log's checkpoints in the background.
    witnesses: tuple[str, ...] = ()
    witness_interval_s: float = 10.0
    witness_timeout_s: float = 5.0
    # The log's write path (registry/writer.py): group commit, then integration.
    write_batch: int = 512
    log_queue: int = 8192
    integrate_interval_s: float = 0.1
    integrate_batch: int = 1024
    integration_wait_s: float = 30.0
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise errors.UsageError(f"port {self.port} is not between 0 and 65535")
        if self.max_body_bytes < 1024:
            raise errors.UsageError("max body size must be at least 1024 bytes")
        timeouts = (self.body_timeout_s, self.keep_alive_timeout_s, self.header_timeout_s)
        if not all(0 < t <= 3600 for t in timeouts):
            raise errors.UsageError(
                "body, keep-alive and request-head timeouts must be between 0 and 3600 seconds"
            )
        if self.max_connections is not None and self.max_connections < 1:
            raise errors.UsageError("max connections must be at least 1")
        if not 1 <= self.read_threads <= 64:
            raise errors.UsageError("read threads must be between 1 and 64")
        if self.walk_max_nodes < 1 or self.walk_max_bytes < 1024 or not self.walk_max_seconds > 0:
            raise errors.UsageError("walk bounds must be positive (at least 1 node, 1024 bytes)")
        if not _PUBLISHER_ID.fullmatch(self.publisher_id):
            raise errors.UsageError(
                f"publisher id {self.publisher_id!r} must match {_PUBLISHER_ID.pattern}"
            )
        if not _KEY_ID.fullmatch(self.key_id):
            raise errors.UsageError(f"key id {self.key_id!r} must match {_KEY_ID.pattern}")
        if self.database_url and not self.database_url.startswith(
            ("sqlite:///", "postgresql://", "postgres://")
        ):
            raise errors.UsageError(
                "database URL must be sqlite:///PATH or postgresql://USER@HOST:PORT/DB"
            )
        if not 0.05 <= self.witness_interval_s <= 86400 or not 0 < self.witness_timeout_s <= 60:
            raise errors.UsageError(
                "witness interval must be 0.05 to 86400 seconds, the timeout 0 to 60 seconds"
            )
        if not 1 <= self.write_batch <= 10_000 or not 1 <= self.log_queue <= 1_000_000:
            raise errors.UsageError(
                "the write batch must be 1 to 10,000 writes, the queue 1 to 1,000,000"
            )
        if not 0.001 <= self.integrate_interval_s <= 60 or self.integrate_batch < 1:
            raise errors.UsageError(
                "the integration interval must be 0.001 to 60 seconds, its batch at least 1"
            )
        if not 0 < self.integration_wait_s <= 600:
            raise errors.UsageError("the integration wait must be 0 to 600 seconds")
        if self.witnesses:
            from affidavit.registry.clients.witness import parse_witnesses  # noqa: PLC0415 - only with witnesses

            # the one URL rule (clients/https.py parse_url): a bad URL#VKEY refuses the start
            # (exit 2) instead of failing every cosigning round
            parse_witnesses(self.witnesses)
        if self.public_url:
            from affidavit.registry.clients.https import parse_url  # noqa: PLC0415 - only with a public URL

            try:  # clients fetch what node_url says: it follows their URL rule
                parse_url(self.public_url, allow_query=False)
            except errors.UsageError as e:
                raise errors.UsageError(f"public URL {e.message}") from None

    @property
    def node_url(self) -> str:
        """The URL clients use to reach this node (no trailing slash)."""
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")

    @property
    def database_path(self) -> Path:
        """The one SQLite database: contracts, entries, log, facts, API keys."""
        return self.data_dir / "registry.db"

    @property
    def database(self) -> str:
        """Where the store is: ``postgresql://...`` as given, else the SQLite file's path."""
        url = self.database_url
        if url.startswith("sqlite://"):
            return url.removeprefix("sqlite://")
        return url or str(self.database_path)

    @property
    def uses_postgres(self) -> bool:
        return self.database_url.startswith(("postgresql://", "postgres://"))

    @property
    def key_dir(self) -> Path:
        """Where the publisher (and log) signing key lives, mode 0600."""
        return self.data_dir / "keys"

    @classmethod
    def from_env(cls, env: Mapping[str, str], **overrides: Any) -> Settings:
        """Defaults, then ``AFFIDAVIT_*`` variables from ``env``, then non-None ``overrides``.

        Raises:
            ``usage.invalid``: a variable has the wrong type or a value is out of range.
        """
        values: dict[str, Any] = {}
        for variable, (name, kind) in _ENV.items():
            raw = env.get(variable)
            if raw is None or raw == "":
                continue
            try:
                values[name] = kind(raw)
            except ValueError:
                what = getattr(kind, "__name__", "value").lstrip("_")
                raise errors.UsageError(f"{variable}={raw!r} is not a valid {what}") from None
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)
