"""Opening the registry's state, and the start-up refusals (docs/adr/0005).

:func:`open_state` opens the store, the key, the log and the fact store, loads the contracts and
indexes the stored facts (a record it cannot read is listed in ``state.tables.degraded``, never
fatal). Start-up refuses, with one stable code (docs/adr/0005): a data folder that cannot be used
(``registry.data_dir_invalid``), a damaged database (``store.corrupt``), a missing, emptied or
forked database while the key has signed heads (``log.state_mismatch``), and a stored tree that
contradicts a signed head or its own nodes (``log.unhealthy``). Files it creates are private.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from affidavit.attest.errors import LogError
from affidavit.attest.files import folder_lock, private_database, private_dir
from affidavit.attest.keyring import SigningKey, load_or_generate_key
from affidavit.attest.log.state import read_state, state_path
from affidavit.attest.log.transparency import TransparencyLog
from affidavit.attest.stores.facts import FactStore
from affidavit.attest.stores.store import Store
from affidavit.registry import scitt
from affidavit.registry.contracts import ContractCatalog
from affidavit.registry.db import RegistryTables, refuse_lost_database
from affidavit.registry.errors import RegistryError
from affidavit.registry.integrity import index_stored_facts
from affidavit.registry.lookup import catch_up, catch_up_all
from affidavit.registry.settings import Settings
from affidavit.registry.state import RegistryState, StoreHealth, utc_now
from affidavit.registry.threads import DbThread, ReadPool
from affidavit.registry.writer import LogWriter
from affidavit.verify import errors

__all__ = ["check_log", "open_state"]

_LOG = logging.getLogger("affidavit.registry")
T = TypeVar("T")


def open_state(
    settings: Settings,
    *,
    clock: Callable[[], datetime] | None = None,
    signing_key: SigningKey | None = None,
) -> RegistryState:
    """The registry's state, opened (module docstring)."""
    _private_folders(settings)
    key = signing_key if signing_key is not None else _load_or_create_key(settings)
    key = key.with_labels(key_id=settings.key_id, publisher_id=settings.publisher_id)
    state_file = state_path(settings.key_dir / f"{settings.key_id}.key", settings.log_id)
    signed_before = read_state(state_file, key.public_key, settings.log_id) is not None
    if signed_before and not settings.uses_postgres:  # PostgreSQL: TransparencyLog.create refuses
        refuse_lost_database(settings.database_path, [state_file])
    db = DbThread()
    readers: ReadPool | None = None
    try:
        clock = clock or utc_now
        tables, log, facts = db.call(_open_storage, settings, key, clock, state_file)
        readers = ReadPool(settings.database, settings.read_threads)
        catalog = ContractCatalog(settings, key, tables, clock)
        state = RegistryState(
            settings=settings,
            clock=clock,
            key=key,
            db=db,
            tables=tables,
            log=log,
            facts=facts,
            catalog=catalog,
            health=StoreHealth(settings.database),
            writer=LogWriter(
                db=db,
                readers=readers,
                tables=tables,
                log=log,
                clock=clock,
                settings=settings,
                after_integration=lambda: catch_up(tables, log),  # the lookup index, in step
            ),
            readers=readers,
        )
        db.call(catalog.start, log)
        db.call(index_stored_facts, tables, facts)
        db.call(catch_up_all, tables, log)  # the lookup index (registry/lookup.py)
        store = tables.store  # what /v1/health says of it, read on the database thread
        state.health.report = db.call(
            lambda: {
                "kind": store.kind,
                "schema": {c: store.schema_version(c) for c in ("log", "registry")},
            }
        )
    except BaseException:
        if readers is not None:
            readers.shutdown()
        db.shutdown()
        raise
    return state


def _private_folders(settings: Settings) -> None:
    """The data folder and the key folder, made 0700 when created here.

    Raises:
        ``registry.data_dir_invalid``: a folder cannot be created or is not a folder.
    """
    for folder in (settings.data_dir, settings.key_dir):
        try:
            private_dir(folder)
            if not os.access(folder, os.W_OK | os.X_OK):
                raise PermissionError(13, "not writable")
        except OSError as e:
            raise RegistryError(
                "registry.data_dir_invalid",
                f"{folder}: cannot use it as the registry's folder: {e.strerror or e}",
                details={"path": str(folder)},
            ) from e


def _load_or_create_key(settings: Settings) -> SigningKey:
    """The publisher (and log) key, generated once even by instances started together."""
    manifest_url = f"{settings.node_url}/specs/adapter-contracts.manifest.json"
    try:
        key, generated = load_or_generate_key(
            settings.key_dir, settings.publisher_id, settings.key_id, manifest_url
        )
    except OSError as e:
        raise RegistryError(
            "registry.data_dir_invalid",
            f"{settings.key_dir}: cannot write the publisher key: {e.strerror or e}",
        ) from e
    if generated:
        _LOG.info("generated publisher key %s in %s", settings.key_id, settings.key_dir)
    return key


def check_log(
    store: Store,
    key: SigningKey,
    state_file: Path,
    log_id: str,
    *,
    clock: Callable[[], datetime] = utc_now,
) -> TransparencyLog:
    """The start-up check of the log in ``store``: bound to the key's signed state file, the
    settings' log under the key it runs with, the tree against its signed heads and every node.

    Raises:
        ``log.not_found``: no log yet.
        ``usage.invalid``: the store holds another log.
        ``log.key_mismatch``: the log was rotated to another key.
        ``log.state_mismatch``, ``log.unhealthy``: refused.
    """
    log = _locked_retry(
        store,
        "log.state_mismatch",
        lambda: TransparencyLog.open(store, key, clock=clock, state_file=state_file),
    )
    if log.log_id != log_id:
        raise errors.UsageError(
            f"{store.path} holds log {log.log_id!r}, the settings say {log_id!r}"
        )
    if log.public_key.raw != key.public_key.raw:  # an earlier key of a rotated log (adr/0011)
        raise LogError(
            "log.key_mismatch",
            f"{store.path}: the log was rotated to key {log.key_id!r}; start with that key "
            f"(AFFIDAVIT_KEY_ID={log.key_id})",
        )
    try:  # the tree against its latest signed head, and every node (docs/adr/0005)
        _locked_retry(store, "log.integrity", lambda: log.verify_integrity(full=True))
    except LogError as e:
        if e.code != "log.integrity":
            raise
        raise LogError(
            "log.unhealthy",
            f"refusing to start: {e.message}; restore the database from a backup",
            details=e.details,
        ) from e
    return log


def _locked_retry(store: Store, code: str, attempt: Callable[[], T]) -> T:
    """``attempt()``, and once more under the writer lock when it fails with ``code``: another
    instance writes its signed state before COMMIT, so only what fails where no signer is
    mid-transaction is damage (issue 31).

    Raises:
        whatever ``attempt`` raises under the lock (``log.*``).
    """
    try:
        return attempt()
    except LogError as e:
        if e.code != code:
            raise
    with store.write():
        return attempt()


def _check_pages(path: Path) -> None:
    """``PRAGMA quick_check`` on an existing database before anything writes to it.

    Raises:
        ``store.corrupt``, ``store.unreadable``: SQLite reports damage, or it is not a database.
    """
    if not path.exists() or path.stat().st_size == 0:
        return
    reader = Store.open(path, readonly=True)
    try:
        reader.quick_check()
    finally:
        reader.close()


def _open_storage(
    settings: Settings, key: SigningKey, clock: Callable[[], datetime], state_file: Path
) -> tuple[RegistryTables, TransparencyLog, FactStore]:
    """One database, the fact store created first (it insists on a fresh file or its own), under
    the key folder's lock: instances started together must not race to create the same tables
    and log (issue 21)."""
    with folder_lock(settings.key_dir):
        if settings.uses_postgres:
            FactStore.connect(settings.database_url).close()  # its tables, created when absent
            store = Store.connect(settings.database_url)
        else:
            path = settings.database_path
            try:
                private_database(path, tighten=True)
            except OSError as e:
                raise RegistryError(
                    "registry.data_dir_invalid", f"{path}: cannot create: {e.strerror or e}"
                ) from e
            _check_pages(path)
            FactStore.open(path, create=True).close()  # its tables, created when absent
            store = Store.open(path, create=True)
        # One connection for the log, the registry tables and the fact store: a fact and its index
        # row, a contract row and its log leaf, commit together (docs/adr/0017).
        facts = FactStore.sharing(store)
        tables = RegistryTables.open(settings.database_path, store=store)
        store.migrate(scitt.COMPONENT, scitt.MIGRATIONS)  # once, here: never per call (issue 32)
        try:
            log: TransparencyLog = check_log(store, key, state_file, settings.log_id, clock=clock)
        except LogError as e:
            if e.code != "log.not_found":
                raise
            log = TransparencyLog.create(
                store, key, settings.log_id, clock=clock, state_file=state_file
            )
        return tables, log, facts
