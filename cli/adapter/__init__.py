"""``affidavit adapter``: author, lint, publish and pin AdapterContracts (seed 003).

``affidavit adapter scaffold --id com.example.adapter`` writes a contract to start from; the verbs
are listed in :data:`affidavit.cli._group.ADAPTER_COMMANDS`. Modules: ``authoring`` (scaffold,
lint, bump, diff), ``publish`` (attest, manifest, list, lifecycle), ``pins`` (pin, pins check: the
CI gate) and ``pins_scan`` (finding the contract files the gate checks).
"""

__all__: list[str] = []
