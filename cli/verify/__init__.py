"""``affidavit verify``: the offline verifier's commands (exit 0 verified, 1 not verified, 2
unreadable input or usage).

``affidavit verify bundle bundle.json --public-key-base64 K`` verifies a ProofPack bundle; the
verbs are listed in :data:`affidavit.cli._group.VERIFY_COMMANDS`. Modules: ``bundle`` (bundle,
attestation; docs/adr/0003-cold-start.md, docs/adr/0022-click-alone.md), ``anchor``,
``primitives`` (checkpoint, inclusion), ``dsse``, ``receipt``, ``scitt`` and ``tlog``
(tlog-proof). Every verb that needs trust takes the one trust option group
(:mod:`affidavit.cli._trust`).
"""

__all__: list[str] = []
