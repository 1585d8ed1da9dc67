"""``affidavit adapter``: author, lint, publish and pin AdapterContracts."""
