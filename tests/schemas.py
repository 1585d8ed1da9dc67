"""The JSON Schemas of the CLI's ``--json`` outputs (specs/output/), for tests.

Every command with a ``--json`` option has ``specs/output/<command words joined by ->.schema.json``
(``affidavit verify dsse --json`` -> ``specs/output/verify-dsse.schema.json``), and a test that runs
the command checks its output with :func:`assert_output_schema`
(tests/cli/test_output_schemas.py checks that both exist for every command).

``$ref`` is resolved offline against the schemas this repository ships: every ``*.json`` schema
under specs/ (by its ``$id``: specs/output/, specs/predicates/, ``specs/verify-result.schema.json``
...) and the components of the registry's OpenAPI document, ``specs/registry-v1.yaml``, under
:data:`OPENAPI_URI` (OpenAPI 3.0 ``nullable: true`` read as a ``null`` alternative, as
tests/registry/openapi_check.py reads it).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import referencing
import referencing.exceptions
import referencing.jsonschema
import yaml

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"
OUTPUT_SCHEMAS = SPECS / "output"
OUTPUT_BASE = "https://affidavit.dev/schemas/output/"
OPENAPI_URI = "https://affidavit.invalid/specs/registry-v1.yaml"
# specs/output/ files that are no command's output: pieces the command schemas reference.
SHARED_SCHEMAS = frozenset({"defs", "error"})


def schema_path(command: str) -> Path:
    """The schema file of ``command`` (its words after ``affidavit``, e.g. ``"verify dsse"``)."""
    return OUTPUT_SCHEMAS / f"{'-'.join(command.split())}.schema.json"


def output_schema_names() -> list[str]:
    """The stems of every specs/output/*.schema.json that is a command's (shared pieces aside)."""
    names = (
        path.name.removesuffix(".schema.json") for path in OUTPUT_SCHEMAS.glob("*.schema.json")
    )
    return sorted(name for name in names if name not in SHARED_SCHEMAS)


def _nullable(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _nullable(v) for k, v in node.items() if k != "nullable"}
        return {"anyOf": [out, {"type": "null"}]} if node.get("nullable") is True else out
    if isinstance(node, list):
        return [_nullable(v) for v in node]
    return node


@functools.cache
def schema_registry() -> referencing.Registry[Any]:
    """Every schema under specs/ by its ``$id``, and the OpenAPI document at :data:`OPENAPI_URI`."""
    resources = []
    for path in sorted(SPECS.rglob("*.json")):
        contents = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(contents, dict) and "$schema" in contents and "$id" in contents:
            resources.append(referencing.Resource.from_contents(contents))
    openapi = _nullable(yaml.safe_load((SPECS / "registry-v1.yaml").read_text(encoding="utf-8")))
    spec = referencing.jsonschema.DRAFT202012
    registry: referencing.Registry[Any] = referencing.Registry().with_resources(
        (resource.id() or "", resource) for resource in resources
    )
    complete: referencing.Registry[Any] = registry.with_resource(
        OPENAPI_URI, spec.create_resource(openapi)
    )
    return complete


def load_schema(command_or_name: str) -> dict[str, Any]:
    """The parsed schema of a command (``"verify dsse"``) or a specs/output stem (``"defs"``)."""
    document: dict[str, Any] = json.loads(schema_path(command_or_name).read_text(encoding="utf-8"))
    return document


@functools.cache
def _validator(command: str) -> Any:
    schema = load_schema(command)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, registry=schema_registry(), format_checker=cls.FORMAT_CHECKER)


def _describe(error: jsonschema.ValidationError) -> str:
    # A oneOf/anyOf failure says only "not valid under any of the given schemas": name the
    # failures of the alternative that came closest (the fewest errors) instead.
    if error.context:
        branches: dict[Any, list[jsonschema.ValidationError]] = {}
        for inner in error.context:
            branches.setdefault(inner.relative_schema_path[0], []).append(inner)
        closest = min(branches.values(), key=len)
        return "; ".join(_describe(inner) for inner in closest)
    return f"{'/'.join(map(str, error.absolute_path)) or '<root>'}: {error.message}"


def output_errors(command: str, document: Any) -> list[str]:
    """Where ``document`` breaks ``command``'s schema (empty when it matches), one line each."""
    errors = sorted(_validator(command).iter_errors(document), key=lambda e: list(map(str, e.path)))
    return [_describe(e) for e in errors]


def assert_output_schema(command: str, document: Any) -> None:
    """Fail unless ``document`` (parsed JSON, or the raw text) matches ``command``'s schema."""
    if isinstance(document, str | bytes):
        document = json.loads(document)
    found = output_errors(command, document)
    assert not found, f"{command} --json output does not match its schema: " + "; ".join(found[:5])


def assert_verify_report(document: Any) -> None:
    """Fail unless ``document`` is a report of ``specs/verify-result.schema.json`` (as the
    library writes it, before a command adds the trust it verified under)."""
    schema = json.loads((SPECS / "verify-result.schema.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema, registry=schema_registry())
    found = [_describe(e) for e in validator.iter_errors(document)]
    assert not found, "not a verify-result report: " + "; ".join(found[:5])


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def unresolved_refs(schema: dict[str, Any]) -> list[str]:
    """The ``$ref`` values of ``schema`` (a root with an ``$id``) that resolve to nothing."""
    resolver = schema_registry().resolver(base_uri=schema.get("$id", ""))
    missing = []
    for ref in _refs(schema):
        try:
            resolver.lookup(ref)
        except referencing.exceptions.Unresolvable:
            missing.append(ref)
    return missing
