"""The client: typed probe results, process vs middleware mode (seed 000 §12.2-12.3), fetches."""

from __future__ import annotations

import httpx
import pytest
from affidavit.registry.clients.registry import (
    NodeDescription,
    ProbeFailure,
    RegistryClient,
    fetch_manifest,
    fetch_public_key,
    middleware_probe,
    probe,
    require_node,
)
from affidavit.verify import errors
from affidavit.verify.contracts.manifest import verify_manifest

from tests.conftest import raises_code
from tests.registry.conftest import SpecClient, registry_key
from tests.registry.helpers import contract

BASE = "http://testserver"


def _transport(client: SpecClient) -> httpx.BaseTransport:
    return client.client._transport  # the in-process ASGI transport of the TestClient


def _mock(status: int, body: bytes) -> httpx.MockTransport:
    return httpx.MockTransport(lambda request: httpx.Response(status, content=body))


def test_probe_success(client: SpecClient) -> None:
    node = probe(BASE, transport=_transport(client))
    assert isinstance(node, NodeDescription)
    assert (node.node_id, node.auth, node.federation) == (
        "urn:affidavit:node:local",
        "required",
        "disabled",
    )
    assert require_node(BASE, transport=_transport(client)) == node


def test_probe_from_environment(client: SpecClient) -> None:
    node = probe(None, env={"AFFIDAVIT_REGISTRY_URL": BASE + "/"}, transport=_transport(client))
    assert isinstance(node, NodeDescription)
    assert node.url == BASE


@pytest.mark.parametrize(
    ("url", "transport", "code"),
    [
        (None, None, "registry.url_missing"),
        ("ftp://example", None, "registry.url_missing"),
        (BASE, _mock(500, b"oops"), "registry.bad_response"),
        (BASE, _mock(503, b""), "registry.unavailable"),
        (BASE, _mock(200, b'{"version": "1", "node_id": "n"}'), "registry.bad_response"),
        (BASE, _mock(200, b"[1]"), "registry.bad_response"),
        ("http://127.0.0.1:9", None, "registry.unavailable"),
    ],
)
def test_probe_failures_are_typed(
    url: str | None, transport: httpx.BaseTransport | None, code: str
) -> None:
    result = probe(url, env={}, transport=transport, timeout=2.0)
    assert isinstance(result, ProbeFailure)
    assert result.code == code
    # process mode: a clear error with that code
    with pytest.raises(errors.AffidavitError) as caught:
        require_node(url, env={}, transport=transport, timeout=2.0)
    assert caught.value.code == code
    # middleware mode: never raises, nothing to do
    assert middleware_probe(url, env={}, transport=transport, timeout=2.0) is None


def test_fetch_public_key_and_manifest(client: SpecClient) -> None:
    key = fetch_public_key(BASE, transport=_transport(client))
    assert key.raw == registry_key().public_key.raw
    doc_key = fetch_public_key(
        f"{BASE}/.well-known/affidavit-local-publisher.json", transport=_transport(client)
    )
    assert doc_key.raw == key.raw
    manifest = fetch_manifest(BASE, transport=_transport(client))
    assert verify_manifest(manifest, public_key=key).ok
    with raises_code("net.bad_response"):  # a key document may be anyone's (issue 22)
        fetch_public_key(BASE, transport=_mock(200, b'{"nothing": 1}'))
    with pytest.raises(errors.KeyMaterialError):
        fetch_public_key(BASE, transport=_mock(200, b'{"public_key_base64": "AAAA"}'))


def test_registry_client_round_trip(client: SpecClient, keys: dict[str, str]) -> None:
    with RegistryClient(BASE, api_key=keys["publish"], env={}, transport=_transport(client)) as rc:
        result = rc.publish(contract())
        assert result["created"] is True
        patched = rc.set_lifecycle("acme.eval_suite.v0", "0.1.0", status="deprecated")
        assert patched["entry"]["status"] == "deprecated"
        with raises_code("registry.remote_error") as caught:
            rc.put_facts([{"entity": "x"}])
        assert caught.value.details["error"]["code"] == "auth.forbidden"
