"""Validate requests and responses against specs/registry-v1.yaml (seed 001: contract-first).

OpenAPI 3.0 schemas are JSON Schema plus ``nullable``; :func:`_to_json_schema` rewrites
``nullable: true`` into a ``null`` alternative, and the components are validated with jsonschema
(draft 2020-12) with ``$ref`` resolved inside the one document.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import yaml
from affidavit.specs import read_spec

SPEC: dict[str, Any] = yaml.safe_load(read_spec("registry-v1.yaml"))
METHODS = ("get", "put", "post", "patch", "delete")


def _to_json_schema(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _to_json_schema(v) for k, v in node.items() if k != "nullable"}
        if node.get("nullable") is True:
            return {"anyOf": [out, {"type": "null"}]}
        return out
    if isinstance(node, list):
        return [_to_json_schema(v) for v in node]
    return node


_COMPONENTS = _to_json_schema(copy.deepcopy(SPEC["components"]))


def _validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    root = {**schema, "components": _COMPONENTS}
    return jsonschema.Draft202012Validator(root)


def _template_regex(template: str) -> re.Pattern[str]:
    escaped = re.escape(template).replace(r"\{", "{").replace(r"\}", "}")
    # {path} (a tlog tile path) spans several segments; every other parameter is one segment.
    pattern = re.sub(r"\{[a-z_]+\}", "[^/]+", escaped.replace("{path}", ".+"))
    return re.compile("^" + pattern + "$")


_ROUTES = [(template, _template_regex(template)) for template in SPEC["paths"]]


def match_path(path: str) -> str:
    """The spec's path template for a concrete path (the most specific match)."""
    hits = [t for t, rx in _ROUTES if rx.match(path)]
    assert hits, f"{path} is not in the OpenAPI document"
    return min(hits, key=lambda t: t.count("{"))


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        parts = node["$ref"].removeprefix("#/").split("/")
        target: Any = SPEC
        for part in parts:
            target = target[part]
        node = target
    return node


def operation(method: str, template: str) -> dict[str, Any]:
    """The operation object; fails when the spec lacks it."""
    item = SPEC["paths"][template]
    assert method.lower() in item, f"{method} {template} is not in the OpenAPI document"
    return item[method.lower()]  # type: ignore[no-any-return]


def check_request(method: str, path: str, body: Any) -> None:
    """Validate a JSON request body against the operation's requestBody schema."""
    op = operation(method, match_path(path))
    content = op["requestBody"]["content"]["application/json"]
    _validator(content["schema"]).validate(body)


def check_response(method: str, path: str, status: int, content_type: str, raw: bytes) -> Any:
    """Validate a response: the status is documented, and a JSON body matches its schema."""
    template = match_path(path)
    op = operation(method, template)
    documented = op["responses"]
    assert str(status) in documented, f"{method} {template} -> {status} is not documented"
    response = _resolve(documented[str(status)])
    if status == 304 or "content" not in response:
        assert raw == b"", f"{method} {template} -> {status} has an undocumented body"
        return None
    media = content_type.split(";", maxsplit=1)[0].strip()
    assert media in response["content"], f"{method} {template} -> {status}: {media} not documented"
    if media == "application/octet-stream" or media.endswith(("+cbor", "/cbor", "/cose")):
        return raw  # binary: SCITT's COSE and CBOR bodies
    if media != "application/json":
        return raw.decode("utf-8")
    document = json.loads(raw)
    _validator(response["content"][media]["schema"]).validate(document)
    return document


def all_operations() -> set[tuple[str, str]]:
    """Every (METHOD, template) the document describes."""
    return {
        (method.upper(), template)
        for template, item in SPEC["paths"].items()
        for method in item
        if method in METHODS
    }


@dataclass
class Coverage:
    """Which operations a test exercised."""

    seen: set[tuple[str, str]] = field(default_factory=set)

    def add(self, method: str, path: str) -> None:
        self.seen.add((method.upper(), match_path(path)))
