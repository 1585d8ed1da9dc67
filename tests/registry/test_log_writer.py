"""registry/clients/log_entries.py: a remote writer uses nothing of the registry's answer it has
not proven. A genuine answer (from the app in-process) passes; each single change to it is
refused with registry.bad_response and the failing check's own code."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from affidavit.registry.clients.log_entries import _proven, is_registry_url
from affidavit.registry.settings import Settings
from affidavit.verify.crypto.merkle import leaf_hash, verify_inclusion

from tests.conftest import raises_code
from tests.registry.conftest import SpecClient, make_key, registry_key

DATA = b"an entry a remote writer sent"


@pytest.fixture
def genuine(client: SpecClient, settings: Settings) -> dict[str, Any]:
    key = make_key(settings, "log:write")
    headers = {"Content-Type": "application/octet-stream"}
    for earlier in (b"one", b"two", b"three"):
        client.request("POST", "/v1/log/entries", raw=earlier, key=key, headers=headers)
    answer = client.request(
        "POST", "/v1/log/entries", raw=DATA, key=key, headers=headers, params={"wait": "integrated"}
    )
    assert answer.status_code == 201
    document: dict[str, Any] = answer.json()
    return document


def _prove(document: dict[str, Any], settings: Settings) -> Any:
    return _proven(
        "http://registry.test", DATA, (document, 201), registry_key().public_key, settings.log_id
    )


def test_a_genuine_answer_is_proven_into_a_bundle_inclusion(
    genuine: dict[str, Any], settings: Settings
) -> None:
    proven = _prove(genuine, settings)
    assert proven.created
    assert proven.index == 3
    assert proven.leaf_hash == leaf_hash(DATA)
    inclusion = proven.inclusion
    assert inclusion["log_id"] == settings.log_id == proven.signed_tree_head["log_id"]
    assert inclusion["merkle_root"] == proven.signed_tree_head["root_hash"]
    verify_inclusion(  # RFC 9162 §2.1.3.2, from the bundle's own object
        leaf_hash(DATA),
        inclusion["leaf_index"],
        inclusion["tree_size"],
        [bytes.fromhex(p["hash"]) for p in inclusion["proof"]],
        bytes.fromhex(inclusion["merkle_root"]),
    )


def _flip(text: str) -> str:
    return ("0" if text[0] != "0" else "1") + text[1:]


def _flip_signature(note: str) -> str:
    body, _, line = note.rstrip("\n").rpartition("\n")
    name, _, signature = line.rpartition(" ")
    flipped = ("A" if signature[8] != "A" else "B").join((signature[:8], signature[9:]))
    return f"{body}\n{name} {flipped}\n"


TAMPERS: dict[str, tuple[Callable[[dict[str, Any]], None], str | None]] = {
    "leaf hash": (lambda d: d.update(leaf_hash=_flip(d["leaf_hash"])), None),
    "index": (lambda d: d.update(index=d["index"] - 1), "merkle.root_mismatch"),
    "no checkpoint": (lambda d: d.pop("checkpoint"), None),
    "checkpoint signature": (
        lambda d: d.update(checkpoint=_flip_signature(d["checkpoint"])),
        "checkpoint.signature_bad",
    ),
    "proof hash": (
        lambda d: d["inclusion_proof"]["hashes"].__setitem__(
            0, _flip(d["inclusion_proof"]["hashes"][0])
        ),
        "merkle.root_mismatch",
    ),
    "proof shortened": (
        lambda d: d["inclusion_proof"]["hashes"].pop(),
        "merkle.bad_proof_length",
    ),
    "proof size": (
        lambda d: d["inclusion_proof"].update(tree_size=d["inclusion_proof"]["tree_size"] + 1),
        None,
    ),
    "tree head root": (
        lambda d: d["signed_tree_head"].update(root_hash=_flip(d["signed_tree_head"]["root_hash"])),
        "treehead.signature_bad",
    ),
    "tree head signature": (
        lambda d: d["signed_tree_head"].update(signature=_flip(d["signed_tree_head"]["signature"])),
        "treehead.signature_bad",
    ),
}


@pytest.mark.parametrize("tamper", sorted(TAMPERS))
def test_any_single_change_to_the_answer_is_refused(
    genuine: dict[str, Any], settings: Settings, tamper: str
) -> None:
    change, cause = TAMPERS[tamper]
    document = copy.deepcopy(genuine)
    change(document)
    with raises_code("registry.bad_response") as refused:
        _prove(document, settings)
    assert refused.value.details.get("cause") == cause


def test_a_tree_head_of_another_size_is_refused(
    client: SpecClient, genuine: dict[str, Any], settings: Settings
) -> None:
    # A genuine, signed head of a different size: signed, but not the checkpoint's tree.
    later = client.request(
        "POST",
        "/v1/log/entries",
        raw=b"a later entry",
        key=make_key(settings, "log:write"),
        headers={"Content-Type": "application/octet-stream"},
        params={"wait": "integrated"},
    ).json()
    assert later["signed_tree_head"]["tree_size"] > genuine["inclusion_proof"]["tree_size"]
    document = copy.deepcopy(genuine)
    document["signed_tree_head"] = later["signed_tree_head"]
    with raises_code("registry.bad_response"):
        _prove(document, settings)


def test_which_logs_are_registries() -> None:
    assert is_registry_url("https://registry.example")
    assert is_registry_url("HTTP://127.0.0.1:8080/")
    assert not is_registry_url("log.db")
    assert not is_registry_url("./https:/x")
    assert not is_registry_url(None)
