"""affidavit.attest: everything that signs or writes (keys, log, stamp, publish, stores)."""

__all__: list[str] = []
