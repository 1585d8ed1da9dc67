"""The contracts room: AdapterContracts (docs/formats.md §2, §3; seed 003).

:mod:`.contract` hashes and lints a contract against :mod:`.schema`; :mod:`.validators` type an
adapter's output; :mod:`.policy` is the acceptance policy and its replay; :mod:`.lifecycle`,
:mod:`.manifest` and :mod:`.freshness` are publishing; :mod:`.pins`, :mod:`.pin_file` and
:mod:`.pin_plan` the pin check behind the CI gate.
"""

from __future__ import annotations

from affidavit.verify import _lazy_names

# name -> the module of this room that defines it, imported on first use (PEP 562,
# docs/adr/0003-cold-start.md). The public names are these keys. Keep sorted by name.
_HOME = {
    "AcceptancePolicy": "policy",
    "BrokenDeclaration": "pins",
    "CONTRACT_HASH_FIELDS": "contract",
    "ContractReport": "contract",
    "DISTRIBUTION_CHANNELS": "contract",
    "Declaration": "pins",
    "ENTRY_HASH_FIELDS": "manifest",
    "ENTRY_POINT_GROUP": "validators",
    "ENTRY_SCHEMA_VERSION": "manifest",
    "Family": "validators",
    "FreshnessReport": "freshness",
    "INPUT_SCHEMA_HASH_FIELDS": "contract",
    "LIFECYCLE_FIELDS": "contract",
    "LIFECYCLE_STATUSES": "contract",
    "MANIFEST_SCHEMA_VERSION": "manifest",
    "ManifestReport": "manifest",
    "PinCheckReport": "pins",
    "PinFile": "pin_file",
    "PublisherDocument": "manifest",
    "ValidatorRegistry": "validators",
    "active_head": "lifecycle",
    "check_entry_text": "manifest",
    "check_freshness": "freshness",
    "check_pins": "pins",
    "check_signature": "manifest",
    "clear_caches": "contract",
    "contract_hash": "contract",
    "contract_hashes": "contract",
    "contracts_of": "manifest",
    "default_registry": "validators",
    "entry_hash": "manifest",
    "entry_hash_body": "manifest",
    "exact_match": "lifecycle",
    "freshness_hash": "freshness",
    "input_schema_hash": "contract",
    "is_adapter_id": "schema",
    "is_field_name": "schema",
    "is_semver": "schema",
    "lifecycle_of": "policy",
    "lint_contract": "contract",
    "manifest_hash": "manifest",
    "parse_adapter_ref": "lifecycle",
    "parse_duration": "freshness",
    "parse_pin_file": "pin_file",
    "parse_publisher_document": "manifest",
    "parse_semver": "lifecycle",
    "plan_pin": "pin_plan",
    "replay_snapshot": "policy",
    "schema_issues": "schema",
    "verify_entry": "manifest",
    "verify_manifest": "manifest",
}
__all__ = [*_HOME]  # noqa: PLE0604 - the keys of _HOME: one list, no copy to drift
__getattr__, __dir__ = _lazy_names(__name__, _HOME)
