"""``affidavit adapter``: author, lint, publish and pin AdapterContracts (seed 003).

``affidavit adapter scaffold --id com.example.adapter`` writes a contract to start from; the verbs
are listed in :data:`affidavit.cli._group.ADAPTER_COMMANDS`. Modules: ``authoring`` (scaffold,
lint, bump, diff), ``publish`` (attest, manifest, list, lifecycle), ``pins`` (pin, pins check: the
CI gate, and finding the contract files it checks) and ``pins_github`` (its report for Actions).
"""

__all__: list[str] = []
